/** Sign-in with a gateway API key, checked against the gateway before it is kept. */
import { Alert, Button, Center, Paper, PasswordInput, Stack, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { errorText } from './api';
import { fetchSelf } from './self';
import type { KeySelf } from './types';

/** `refusal`: why the gateway stopped taking the key the console was signed in with, if it did. */
export function SignIn({
  refusal,
  onSignIn,
}: {
  refusal: string | null;
  onSignIn: (key: string, self: KeySelf) => void;
}) {
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: React.FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      // Any key may ask who it is: the call that proves the key and tells what it may do.
      const key = value.trim();
      onSignIn(key, await fetchSelf(key));
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
