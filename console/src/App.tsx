/** The console's shell: sign-in, the navigation and one route per page. */
import { Alert, AppShell, Button, Center, Group, Loader, NavLink, Stack, Text, Title } from '@mantine/core';
import { useEffect, useState, type ReactNode } from 'react';
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { errorText, storeKey, storedKey, whenKeyRefused } from './api';
import { fetchSelf, isAdmin, SelfContext } from './self';
import { SignIn } from './SignIn';
import type { KeySelf } from './types';
import { AnalyticsPage } from './pages/AnalyticsPage';
import { ApiKeysPage } from './pages/ApiKeysPage';
import { LogDetailPage } from './pages/LogDetailPage';
import { LogsPage } from './pages/LogsPage';
import { ResourcePage } from './pages/ResourcePage';
import { RESOURCES } from './pages/resources';

/** `admin`: a management page, which a member key may not read (docs/management-api.md). */
const PAGES = [
  { path: '/logs', label: 'Logs', admin: false },
  { path: '/analytics', label: 'Analytics', admin: false },
  { path: '/api-keys', label: 'API keys', admin: true },
  ...RESOURCES.map((resource) => ({ path: `/${resource.page}`, label: resource.title, admin: true })),
];

/** A management page opened with a member key (a link, a bookmark): said here, not asked of the gateway. */
function AdminOnly({ title, self }: { title: string; self: KeySelf }) {
  return (
    <Stack>
      <Title order={2}>{title}</Title>
      <Alert color="orange" title="Admin key needed">
        This page is for an admin key of the workspace; you are signed in with the member key &ldquo;
        {self.name}&rdquo;, which makes model calls and reads logs and analytics.
      </Alert>
    </Stack>
  );
}

export function App() {
  const [key, setKey] = useState(storedKey());
  const [self, setSelf] = useState<KeySelf | null>(null);
  const [selfError, setSelfError] = useState<string | null>(null);
  const [refusal, setRefusal] = useState<string | null>(null);
  const [location] = useLocation();

  useEffect(() => {
    whenKeyRefused((reason) => {
      setRefusal(reason);
      setKey(null);
      setSelf(null);
    });
    return () => whenKeyRefused(undefined);
  }, []);

  // A key kept from before a reload: who it is is asked again (it may have changed role since).
  useEffect(() => {
    if (!key || self) return;
    let live = true;
    fetchSelf()
      .then((found) => live && setSelf(found))
      .catch((err: unknown) => live && setSelfError(errorText(err)));
    return () => {
      live = false;
    };
  }, [key, self]);

  const signOut = () => {
    storeKey(null);
    setKey(null);
    setSelf(null);
    setSelfError(null);
  };

  if (!key) {
    return (
      <SignIn
        refusal={refusal}
        onSignIn={(value, found) => {
          storeKey(value);
          setRefusal(null);
          setSelf(found);
          setKey(value);
        }}
      />
    );
  }

  if (!self) {
    return (
      <Center h="100vh">
        {selfError ? (
          <Alert color="red" title="The gateway did not answer">
            <Stack>
              <Text size="sm">{selfError}</Text>
              <Button size="xs" variant="light" onClick={signOut}>
                Sign out
              </Button>
            </Stack>
          </Alert>
        ) : (
          <Loader />
        )}
      </Center>
    );
  }

  const admin = isAdmin(self);
  const page = (title: string, content: ReactNode) =>
    admin ? content : <AdminOnly title={title} self={self} />;

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 200, breakpoint: 0 }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Title order={4}>AI Gateway</Title>
          <Group>
            <Text size="sm" c="dimmed" data-testid="signed-in-as">
              {self.name} ({self.role}) · <span data-testid="key-prefix">{self.key_prefix}…</span> ·{' '}
              {self.workspace.name}
            </Text>
            <Button variant="subtle" size="xs" onClick={signOut}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs">
        {PAGES.filter((entry) => admin || !entry.admin).map((entry) => (
          <NavLink
            key={entry.path}
            component={Link}
            href={entry.path}
            label={entry.label}
            active={location === entry.path || location.startsWith(`${entry.path}/`)}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <SelfContext.Provider value={self}>
          <Switch>
            <Route path="/logs" component={LogsPage} />
            <Route path="/logs/:id">{(params) => <LogDetailPage id={params.id} />}</Route>
            <Route path="/analytics" component={AnalyticsPage} />
            <Route path="/api-keys">{page('API keys', <ApiKeysPage />)}</Route>
            {RESOURCES.map((resource) => (
              <Route key={resource.page} path={`/${resource.page}`}>
                {page(resource.title, <ResourcePage resource={resource} />)}
              </Route>
            ))}
            <Route>
              <Redirect to="/logs" />
            </Route>
          </Switch>
        </SelfContext.Provider>
      </AppShell.Main>
    </AppShell>
  );
}
