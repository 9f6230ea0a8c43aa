/** The workspace's gateway API keys: create (the secret shown once), revoke, delete. */
import {
  Alert,
  Badge,
  Button,
  Code,
  Group,
  Modal,
  Select,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useCallback, useEffect, useState } from 'react';
import { api, errorText, type ListAnswer } from '../api';
import { copyText } from '../clipboard';
import { RowFilter, useRowFilter } from '../components/RowFilter';
import { WindowedRows } from '../components/WindowedRows';
import { formatUnixSeconds } from '../format';
import type { ApiKey } from '../types';

type Pending = { kind: 'revoke' | 'delete'; key: ApiKey };

/** A row's height before it is measured: a badge and small buttons. */
const ROW_HEIGHT = 47;

const keyId = (key: ApiKey) => key.id;
const textOf = (key: ApiKey) => [key.name, key.key_prefix, key.role, key.status, key.id];

export function ApiKeysPage() {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [role, setRole] = useState<string>('member');
  const [created, setCreated] = useState<(ApiKey & { key: string }) | null>(null);
  const [copied, setCopied] = useState(false);
  const [copyError, setCopyError] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);

  const [loaded, setLoaded] = useState(false);
  const { filter, setFilter, filtered, matching } = useRowFilter(keys, textOf);

  const load = useCallback(async () => {
    try {
      setKeys((await api<ListAnswer<ApiKey>>('/api-keys')).data);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setLoaded(true);
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  async function create(event: React.FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      setCopied(false);
      setCopyError(null);
      setCreated(await api<ApiKey & { key: string }>('/api-keys', { method: 'POST', body: { name, role } }));
      setName('');
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  }

  async function confirm() {
    if (!pending) return;
    const { kind, key } = pending;
    setPending(null);
    setError(null);
    try {
      if (kind === 'revoke') await api(`/api-keys/${key.id}/revoke`, { method: 'POST' });
      else await api(`/api-keys/${key.id}`, { method: 'DELETE' });
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  }

  return (
    <Stack>
      <Title order={2}>API keys</Title>
      <form onSubmit={create}>
        <Group align="end">
          <TextInput
            label="Name"
            name="key-name"
            required
            value={name}
            onChange={(event) => setName(event.currentTarget.value)}
          />
          <Select
            label="Role"
            w={120}
            data={['member', 'admin']}
            value={role}
            allowDeselect={false}
            onChange={(value) => setRole(value ?? 'member')}
          />
          <Button type="submit" disabled={!name.trim()}>
            Create key
          </Button>
        </Group>
      </form>
      {error && <Alert color="red">{error}</Alert>}
      <RowFilter
        filter={filter}
        setFilter={setFilter}
        filtered={filtered}
        matching={matching.length}
        total={keys.length}
        more={!loaded}
      />
      <Table striped data-testid="api-keys-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Name</Table.Th>
            <Table.Th>Prefix</Table.Th>
            <Table.Th>Role</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Created</Table.Th>
            <Table.Th>Last used</Table.Th>
            <Table.Th>Expires</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <WindowedRows rows={matching} columns={8} rowKey={keyId} estimatedHeight={ROW_HEIGHT}>
          {(key, props) => (
            <Table.Tr {...props} data-key-name={key.name}>
              <Table.Td>{key.name}</Table.Td>
              <Table.Td>
                <Code>{key.key_prefix}</Code>
              </Table.Td>
              <Table.Td>{key.role}</Table.Td>
              <Table.Td>
                <Badge
                  color={key.status === 'active' ? 'green' : 'gray'}
                  variant="light"
                  data-testid="key-status"
                >
                  {key.status}
                </Badge>
              </Table.Td>
              <Table.Td>{formatUnixSeconds(key.created_at)}</Table.Td>
              <Table.Td>{formatUnixSeconds(key.last_used_at)}</Table.Td>
              <Table.Td>{key.expires_at ? formatUnixSeconds(key.expires_at) : 'never'}</Table.Td>
              <Table.Td>
                <Group gap="xs" justify="end">
                  {key.status === 'active' && (
                    <Button
                      size="xs"
                      variant="light"
                      color="orange"
                      onClick={() => setPending({ kind: 'revoke', key })}
                    >
                      Revoke
                    </Button>
                  )}
                  <Button
                    size="xs"
                    variant="subtle"
                    color="red"
                    onClick={() => setPending({ kind: 'delete', key })}
                  >
                    Delete
                  </Button>
                </Group>
              </Table.Td>
            </Table.Tr>
          )}
        </WindowedRows>
      </Table>

      <Modal opened={created !== null} onClose={() => setCreated(null)} title="Key created" size="lg">
        {created && (
          <Stack>
            <Text size="sm">
              This is the only time the key <b>{created.name}</b> is shown. Copy it now; the gateway keeps
              only its hash.
            </Text>
            <Code block data-testid="new-key-secret">
              {created.key}
            </Code>
            <Group justify="end">
              {copyError && (
                <Text size="sm" c="red">
                  {copyError}
                </Text>
              )}
              <Button
                onClick={() =>
                  copyText(created.key).then(
                    () => setCopied(true),
                    (err: unknown) => setCopyError(errorText(err)),
                  )
                }
              >
                {copied ? 'Copied' : 'Copy'}
              </Button>
              <Button variant="default" onClick={() => setCreated(null)}>
                Done
              </Button>
            </Group>
          </Stack>
        )}
      </Modal>

      <Modal opened={pending !== null} onClose={() => setPending(null)} title="Are you sure?">
        {pending && (
          <Stack>
            <Text size="sm">
              {pending.kind === 'revoke' ? 'Revoke' : 'Delete'} the key <b>{pending.key.name}</b>? Calls made
              with it are refused from the next request on.
            </Text>
            <Group justify="end">
              <Button variant="default" onClick={() => setPending(null)}>
                Cancel
              </Button>
              <Button color="red" onClick={() => void confirm()}>
                {pending.kind === 'revoke' ? 'Revoke' : 'Delete'}
              </Button>
            </Group>
          </Stack>
        )}
      </Modal>
    </Stack>
  );
}
