/** The console's shell: sign-in, the navigation and one route per page. */
import { AppShell, Button, Group, NavLink, Text, Title } from '@mantine/core';
import { useEffect, useState } from 'react';
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { storeKey, storedKey, whenKeyRefused } from './api';
import { SignIn } from './SignIn';
import { AnalyticsPage } from './pages/AnalyticsPage';
import { ApiKeysPage } from './pages/ApiKeysPage';
import { LogDetailPage } from './pages/LogDetailPage';
import { LogsPage } from './pages/LogsPage';
import { ResourcePage } from './pages/ResourcePage';
import { RESOURCES } from './pages/resources';

const PAGES = [
  { path: '/logs', label: 'Logs' },
  { path: '/analytics', label: 'Analytics' },
  { path: '/api-keys', label: 'API keys' },
  ...RESOURCES.map((resource) => ({ path: `/${resource.page}`, label: resource.title })),
];

export function App() {
  const [key, setKey] = useState(storedKey());
  const [refusal, setRefusal] = useState<string | null>(null);
  const [location] = useLocation();

  useEffect(() => {
    whenKeyRefused((reason) => {
      setRefusal(reason);
      setKey(null);
    });
    return () => whenKeyRefused(undefined);
  }, []);

  if (!key) {
    return (
      <SignIn
        refusal={refusal}
        onSignIn={(value) => {
          storeKey(value);
          setRefusal(null);
          setKey(value);
        }}
      />
    );
  }

  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 200, breakpoint: 0 }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between">
          <Title order={4}>AI Gateway</Title>
          <Group>
            <Text size="sm" c="dimmed" data-testid="key-prefix">
              {key.slice(0, 10)}…
            </Text>
            <Button
              variant="subtle"
              size="xs"
              onClick={() => {
                storeKey(null);
                setKey(null);
              }}
            >
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs">
        {PAGES.map((page) => (
          <NavLink
            key={page.path}
            component={Link}
            href={page.path}
            label={page.label}
            active={location === page.path || location.startsWith(`${page.path}/`)}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        <Switch>
          <Route path="/logs" component={LogsPage} />
          <Route path="/logs/:id">{(params) => <LogDetailPage id={params.id} />}</Route>
          <Route path="/analytics" component={AnalyticsPage} />
          <Route path="/api-keys" component={ApiKeysPage} />
          {RESOURCES.map((resource) => (
            <Route key={resource.page} path={`/${resource.page}`}>
              <ResourcePage resource={resource} />
            </Route>
          ))}
          <Route>
            <Redirect to="/logs" />
          </Route>
        </Switch>
      </AppShell.Main>
    </AppShell>
  );
}
