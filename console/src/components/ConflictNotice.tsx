/**
 * A change or delete the gateway refused (409) for what depends on it: its message, what it names
 * (`error.dependents`) listed, and a way to make it anyway, which the caller repeats with `?force=true`.
 */
import { Alert, Button, Group, List, Stack, Text } from '@mantine/core';
import { countedDependents, listedDependents, type Dependents } from '../dependents';

export function ConflictNotice({
  message,
  dependents,
  action,
  forcing,
  onForce,
}: {
  /** The gateway's message. */
  message: string;
  /** What the gateway named as depending on it. */
  dependents: Dependents;
  /** The button that makes it anyway: `Change anyway`, `Delete anyway`, `Archive anyway`. */
  action: string;
  forcing: boolean;
  onForce: () => void;
}) {
  return (
    <Alert color="orange" title="Refused: others depend on it" data-testid="conflict-notice">
      <Stack gap="xs">
        {/* Its first lines say what was refused and why; the rest lists again what the list below gives. */}
        <Text size="sm" lineClamp={2} title={message}>
          {message}
        </Text>
        <List size="sm" data-testid="conflict-dependents">
          {listedDependents(dependents).map((dependent) => (
            <List.Item key={`${dependent.kind} ${dependent.slug}`}>
              {dependent.kind} <b>{dependent.slug}</b> ({dependent.where})
              {dependent.reason !== undefined && `: ${dependent.reason}`}
            </List.Item>
          ))}
          {countedDependents(dependents).map((counted) => (
            <List.Item key={counted}>{counted}</List.Item>
          ))}
        </List>
        <Group justify="end">
          <Button color="red" loading={forcing} onClick={onForce}>
            {action}
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}
