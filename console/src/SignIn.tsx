/** Sign-in with a gateway API key, checked against the gateway before it is kept. */
import { Alert, Button, Center, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { api, errorText } from './api';

/** `refusal`: why the gateway stopped taking the key the console was signed in with, if it did. */
export function SignIn({ refusal, onSignIn }: { refusal: string | null; onSignIn: (key: string) => void }) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Any key may read its workspace's logs: the cheapest call that proves the key.
      await api('/logs?limit=1', { key: value.trim() });
      onSignIn(value.trim());
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Center h="100vh">
      <Paper withBorder shadow="sm" p="xl" w={420}>
        <form onSubmit={submit}>
          <Stack>
            <Title order={3}>AI Gateway console</Title>
            <Text size="sm" c="dimmed">
              Sign in with a gateway API key. The console shows and manages the key&apos;s workspace; the key
              is kept in this tab only.
            </Text>
            <PasswordInput
              label="Gateway API key"
              name="api-key"
              value={value}
              onChange={(event) => setValue(event.currentTarget.value)}
              autoFocus
            />
            {refusal && !error && (
              <Alert color="orange" title="Signed out">
                The gateway no longer takes the key this tab was signed in with: {refusal}
              </Alert>
            )}
            {error && (
              <Alert color="red" title="Not signed in">
                {error}
              </Alert>
            )}
            <Button type="submit" loading={busy} disabled={!value.trim()}>
              Sign in
            </Button>
          </Stack>
        </form>
      </Paper>
    </Center>
  );
}
