/** A management page of RESOURCES: list, create and edit as JSON, delete. */
import { Alert, Button, Code, Group, List, Modal, Stack, Table, Text, Title } from '@mantine/core';
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiError, errorText, type ListAnswer } from '../api';
import { ConflictNotice } from '../components/ConflictNotice';
import { JsonEditor } from '../components/JsonEditor';
import { SettingSelects } from '../components/SettingSelects';
import { RowFilter, useRowFilter } from '../components/RowFilter';
import { WindowedRows } from '../components/WindowedRows';
import { formatUnixSeconds } from '../format';
import { configValidator, describeErrors } from '../config-schema';
import type { Dependents } from '../dependents';
import type { Resource } from './resources';

type Row = Record<string, unknown>;
interface Editing {
  /** The row changed; undefined for a new one. */
  id?: string;
  text: string;
}

/** A change refused (409) for what depends on the row: the body refused, to send again with `?force=true`. */
interface Conflict extends Refusal {
  id: string;
  body: Row;
  /** The member of the body refused: `status` for an archive. */
  param: string | null;
}

/** The gateway's message refusing a change, and what it names as depending on it. */
interface Refusal {
  message: string;
  dependents: Dependents;
}

/** A refusal for what depends on the row, which `?force=true` overrides. */
function refusedForDependents(err: unknown): err is ApiError & { dependents: Dependents } {
  return err instanceof ApiError && err.code === 'conflict' && err.dependents !== undefined;
}

/** A version as listed: its number and time, and the document it held. */
interface Version {
  version: number;
  created_at: number;
  [field: string]: unknown;
}

/** What the versions list adds around a version's document. */
const VERSION_FIELDS = new Set(['object', 'version', 'created_at', 'config_id', 'guardrail_id', 'prompt_id']);

/** A version's document, as it was saved. */
function versionBody(version: Version): Row {
  return Object.fromEntries(Object.entries(version).filter(([name]) => !VERSION_FIELDS.has(name)));
}

/** Problems the body has before it is sent: JSON syntax, and the config schema where the resource has one. */
async function problemsOf(resource: Resource, text: string): Promise<{ body?: Row; problems: string[] }> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return { problems: [`Not JSON: ${(error as Error).message}`] };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { problems: ['The body must be a JSON object'] };
  }
  const row = body as Row;
  if (resource.configField && row[resource.configField] !== undefined) {
    const validate = await configValidator();
    if (!validate(row[resource.configField])) {
      return { problems: describeErrors(validate.errors, resource.configField) };
    }
  }
  return { body: row, problems: [] };
}

/** A row's height before it is measured: one line of text beside a row of small buttons. */
const ROW_HEIGHT = 45;

/** The collection's GET, which answers every row at once, as one page. */
async function* onePage(resource: Resource): AsyncGenerator<Row[]> {
  yield (await api<ListAnswer<Row>>(resource.path)).data;
}

export function ResourcePage({ resource }: { resource: Resource }) {
  const [rows, setRows] = useState<Row[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [saving, setSaving] = useState(false);
  const [conflict, setConflict] = useState<Conflict | null>(null);
  const [deleting, setDeleting] = useState<Row | null>(null);
  const [removing, setRemoving] = useState(false);
  /** The gateway's refusal of the delete for what depends on the row. */
  const [deleteConflict, setDeleteConflict] = useState<Refusal | null>(null);
  const [history, setHistory] = useState<{ id: string; versions: Version[] } | null>(null);

  // Only the latest load fills the table: one started earlier (before a save, on the page of another
  // resource) may answer after it.
  const latest = useRef(0);
  const shown = useRef(0);
  const load = useCallback(async () => {
    const mine = ++latest.current;
    // The first load shows each page as it comes; a load after a change keeps the rows shown until it has
    // them all, rather than shortening the table under the reader.
    const progressive = shown.current === 0;
    const byId = new Map<string, Row>();
    try {
      for await (const page of resource.pages?.() ?? onePage(resource)) {
        if (mine !== latest.current) return;
        // A row created meanwhile moves the next page's rows by one: the same row twice is listed once.
        for (const row of page) byId.set(resource.idOf(row), row);
        if (progressive) setRows([...byId.values()]);
      }
      if (mine !== latest.current) return;
      setRows([...byId.values()]);
      setError(null);
    } catch (err) {
      if (mine === latest.current) setError(errorText(err));
    } finally {
      if (mine === latest.current) setLoaded(true);
    }
  }, [resource]);

  useEffect(() => {
    shown.current = 0;
    setRows([]);
    setLoaded(false);
    void load();
  }, [load]);
  useEffect(() => {
    shown.current = rows.length;
  }, [rows]);

  const textOf = useCallback(
    (row: Row) => [resource.idOf(row), ...resource.columns.map((column) => column.value(row))],
    [resource],
  );
  const { filter, setFilter, filtered, matching } = useRowFilter(rows, textOf);

  function open(next: Editing | null) {
    setProblems([]);
    setConflict(null);
    setEditing(next);
  }
  const close = () => open(null);

  /** Another body is not the one refused: the offer to force it goes. */
  function changeText(text: string) {
    if (!editing) return;
    setConflict(null);
    setEditing({ ...editing, text });
  }

  async function update(id: string, body: Row, force: boolean) {
    await api(`${resource.path}/${encodeURIComponent(id)}${force ? '?force=true' : ''}`, {
      method: resource.updateMethod,
      body,
    });
  }

  async function save() {
    if (!editing) return;
    setSaving(true);
    setConflict(null);
    const { id } = editing;
    let body: Row | undefined;
    try {
      const checked = await problemsOf(resource, editing.text);
      setProblems(checked.problems);
      body = checked.body;
      if (!body) return;
      if (id === undefined) await api(resource.path, { method: 'POST', body });
      else await update(id, body, false);
      close();
      await load();
    } catch (err) {
      if (resource.forceable?.includes('update') && id !== undefined && body && refusedForDependents(err)) {
        setConflict({ id, body, message: err.message, dependents: err.dependents, param: err.param });
      } else setProblems([`The gateway refused it: ${errorText(err)}`]);
    } finally {
      setSaving(false);
    }
  }

  /** The refused change again, with `?force=true`: made whatever depends on the row. */
  async function force() {
    if (!conflict) return;
    setSaving(true);
    try {
      await update(conflict.id, conflict.body, true);
      close();
      await load();
    } catch (err) {
      setConflict(null);
      setProblems([`The gateway refused it: ${errorText(err)}`]);
    } finally {
      setSaving(false);
    }
  }

  async function act(run: (row: Row) => Promise<unknown>, row: Row) {
    try {
      await run(row);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  }

  async function showVersions(row: Row) {
    const id = resource.idOf(row);
    try {
      const answer = await api<ListAnswer<Version>>(`${resource.path}/${encodeURIComponent(id)}/versions`);
      setHistory({ id, versions: [...answer.data].reverse() });
    } catch (err) {
      setError(errorText(err));
    }
  }

  function confirmDelete(row: Row | null) {
    setDeleteConflict(null);
    setDeleting(row);
  }

  /** Deletes the row; `force` makes it whatever depends on it, once the gateway has refused it for that. */
  async function remove(row: Row, force: boolean) {
    setRemoving(true);
    try {
      const id = encodeURIComponent(resource.idOf(row));
      await api(`${resource.path}/${id}${force ? '?force=true' : ''}`, { method: 'DELETE' });
      confirmDelete(null);
      await load();
    } catch (err) {
      if (!force && resource.forceable?.includes('delete') && refusedForDependents(err)) {
        setDeleteConflict({ message: err.message, dependents: err.dependents });
      } else {
        confirmDelete(null);
        setError(errorText(err));
      }
    } finally {
      setRemoving(false);
    }
  }

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>{resource.title}</Title>
        <Button onClick={() => open({ text: JSON.stringify(resource.template, null, 2) })}>
          New {resource.noun}
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        {resource.description}
      </Text>
      {error && <Alert color="red">{error}</Alert>}
      <RowFilter
        filter={filter}
        setFilter={setFilter}
        filtered={filtered}
        matching={matching.length}
        total={rows.length}
        more={!loaded}
      />
      <Table striped data-testid="resource-table">
        <Table.Thead>
          <Table.Tr>
            {resource.columns.map((column) => (
              <Table.Th key={column.label}>{column.label}</Table.Th>
            ))}
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <WindowedRows
          rows={matching}
          columns={resource.columns.length + 1}
          rowKey={resource.idOf}
          estimatedHeight={ROW_HEIGHT}
        >
          {(row, props) => (
            <Table.Tr {...props} data-row-id={resource.idOf(row)}>
              {resource.columns.map((column) => (
                <Table.Td key={column.label}>
                  <Text size="sm" lineClamp={2}>
                    {column.value(row)}
                  </Text>
                </Table.Td>
              ))}
              <Table.Td>
                <Group gap="xs" justify="end" wrap="nowrap">
                  {resource.actions
                    ?.filter((action) => action.shown(row))
                    .map((action) => (
                      <Button
                        key={action.label(row)}
                        size="xs"
                        variant="light"
                        color="teal"
                        onClick={() => void act(action.run, row)}
                      >
                        {action.label(row)}
                      </Button>
                    ))}
                  {resource.versioned && (
                    <Button size="xs" variant="subtle" onClick={() => void showVersions(row)}>
                      Versions
                    </Button>
                  )}
                  <Button
                    size="xs"
                    variant="light"
                    onClick={() =>
                      open({ id: resource.idOf(row), text: JSON.stringify(resource.editBody(row), null, 2) })
                    }
                  >
                    Edit
                  </Button>
                  <Button size="xs" variant="subtle" color="red" onClick={() => confirmDelete(row)}>
                    Delete
                  </Button>
                </Group>
              </Table.Td>
            </Table.Tr>
          )}
        </WindowedRows>
      </Table>
      {loaded && rows.length === 0 && !error && <Text c="dimmed">None yet.</Text>}
      {rows.length > 0 && matching.length === 0 && <Text c="dimmed">None match.</Text>}

      <Modal
        opened={editing !== null}
        onClose={close}
        title={editing?.id === undefined ? `New ${resource.noun}` : `Edit ${resource.noun} ${editing.id}`}
        size="xl"
      >
        {editing && (
          <Stack>
            <JsonEditor value={editing.text} onChange={changeText} />
            {resource.settingSelects && (
              <SettingSelects
                settings={resource.settingSelects}
                text={editing.text}
                creating={editing.id === undefined}
                onChange={changeText}
              />
            )}
            {problems.length > 0 && (
              <Alert color="red" title="Not saved" data-testid="editor-problems">
                <List size="sm">
                  {problems.map((problem) => (
                    <List.Item key={problem}>{problem}</List.Item>
                  ))}
                </List>
              </Alert>
            )}
            {conflict && (
              <ConflictNotice
                message={conflict.message}
                dependents={conflict.dependents}
                action={conflict.param === 'status' ? 'Archive anyway' : 'Change anyway'}
                forcing={saving}
                onForce={() => void force()}
              />
            )}
            <Group justify="end">
              <Button variant="default" onClick={close}>
                Cancel
              </Button>
              <Button loading={saving} onClick={() => void save()}>
                Save
              </Button>
            </Group>
          </Stack>
        )}
      </Modal>

      <Modal
        opened={history !== null}
        onClose={() => setHistory(null)}
        title={`Versions of ${resource.noun} ${history?.id ?? ''}`}
        size="xl"
      >
        {history && (
          <Stack data-testid="versions">
            {history.versions.map((version) => (
              <Stack key={version.version} gap={4} data-version={version.version}>
                <Text size="sm" fw={600}>
                  Version {version.version} · {formatUnixSeconds(version.created_at)}
                </Text>
                <Code block mah={240}>
                  {JSON.stringify(versionBody(version), null, 2)}
                </Code>
              </Stack>
            ))}
          </Stack>
        )}
      </Modal>

      <Modal opened={deleting !== null} onClose={() => confirmDelete(null)} title="Are you sure?">
        {deleting && (
          <Stack>
            <Text size="sm">
              Delete the {resource.noun} <b>{resource.idOf(deleting)}</b>?
            </Text>
            {deleteConflict !== null && (
              <ConflictNotice
                message={deleteConflict.message}
                dependents={deleteConflict.dependents}
                action="Delete anyway"
                forcing={removing}
                onForce={() => void remove(deleting, true)}
              />
            )}
            <Group justify="end">
              <Button variant="default" onClick={() => confirmDelete(null)}>
                Cancel
              </Button>
              {/* Once refused, the way forward is the notice's: deleting anyway, or not. */}
              {deleteConflict === null && (
                <Button color="red" loading={removing} onClick={() => void remove(deleting, false)}>
                  Delete
                </Button>
              )}
            </Group>
          </Stack>
        )}
      </Modal>
    </Stack>
  );
}
