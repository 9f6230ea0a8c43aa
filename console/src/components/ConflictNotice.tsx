/**
 * A change or delete the gateway refused (409) for what depends on it: what it named, listed, and a way to
 * make it anyway, which the caller repeats with `?force=true`.
 */
import { Alert, Button, Group, List, Stack, Text } from '@mantine/core';
import { refusalOf } from '../dependents';

export function ConflictNotice({
  message,
  action,
  forcing,
  onForce,
}: {
  /** The gateway's message, which names the dependents. */
  message: string;
  /** The button that makes it anyway: `Change anyway`, `Delete anyway`, `Archive anyway`. */
  action: string;
  forcing: boolean;
  onForce: () => void;
}) {
  const refusal = refusalOf(message);
  return (
    <Alert color="orange" title="Refused: others depend on it" data-testid="conflict-notice">
      <Stack gap="xs">
        {refusal ? (
          <>
            <Text size="sm">{refusal.lead}</Text>
            <List size="sm" data-testid="conflict-dependents">
              {refusal.dependents.map((dependent) => (
                <List.Item key={`${dependent.kind} ${dependent.slug}`}>
                  {dependent.kind} <b>{dependent.slug}</b> ({dependent.where})
                </List.Item>
              ))}
              {refusal.more > 0 && <List.Item>{refusal.more} more</List.Item>}
            </List>
            {refusal.tail && <Text size="sm">{refusal.tail}</Text>}
          </>
        ) : (
          <Text size="sm">{message}</Text>
        )}
        <Group justify="end">
          <Button color="red" loading={forcing} onClick={onForce}>
            {action}
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}
