/** The workspace's log records, newest first, with filters and a search over metadata. */
import { Alert, Badge, Button, Group, Select, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useLocation, useSearch } from 'wouter';
import { api, errorText, query, type ListAnswer } from '../api';
import { WindowedRows } from '../components/WindowedRows';
import { formatCost, formatNumber, formatTime, statusColor } from '../format';
import type { LogRecord } from '../types';

const RANGES: Record<string, number | null> = {
  '1h': 3_600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
  all: null,
};

interface Filters {
  search: string;
  provider: string;
  model: string;
  status: string;
  trace_id: string;
  range: string;
}

const EMPTY: Filters = { search: '', provider: '', model: '', status: '', trace_id: '', range: '24h' };
const PAGE = 50;
/** A row's height before it is measured: a status badge. */
const ROW_HEIGHT = 39;
const logId = (row: LogRecord) => row.id;

/** The filters a URL's query names (`/console/logs?trace_id=…&range=all`), so a link or a reload keeps them. */
function filtersOf(search: string): Filters {
  const params = new URLSearchParams(search);
  const filters = { ...EMPTY };
  for (const name of Object.keys(EMPTY) as (keyof Filters)[]) filters[name] = params.get(name) ?? EMPTY[name];
  if (!Object.hasOwn(RANGES, filters.range)) filters.range = EMPTY.range;
  return filters;
}

/** `/logs?…` naming the filters that are not the default ones. */
export function logsPage(filters: Partial<Filters>): string {
  const given = { ...EMPTY, ...filters };
  return `/logs${query({ ...given, range: given.range === EMPTY.range ? undefined : given.range })}`;
}

function logsPath(filters: Filters, after?: string): string {
  const span = RANGES[filters.range];
  return `/logs${query({
    search: filters.search.trim(),
    provider: filters.provider.trim(),
    model: filters.model.trim(),
    status: filters.status.trim(),
    trace_id: filters.trace_id.trim(),
    from_ms: span === null ? undefined : Date.now() - span,
    limit: PAGE,
    after,
  })}`;
}

export function LogsPage() {
  const [, navigate] = useLocation();
  const search = useSearch();
  const filters = useMemo(() => filtersOf(search), [search]);
  const [draft, setDraft] = useState<Filters>(filters);
  const [rows, setRows] = useState<LogRecord[]>([]);
  const [hasMore, setHasMore] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);

  // Only the latest load may fill the table: an earlier one answering late (a slow search, a page asked for
  // before the filters changed) would show records the filters leave out.
  const latest = useRef(0);
  const load = useCallback(async (current: Filters, after?: string) => {
    const mine = ++latest.current;
    setLoading(true);
    setError(null);
    try {
      const page = await api<ListAnswer<LogRecord>>(logsPath(current, after));
      if (mine !== latest.current) return;
      setRows((previous) => (after ? [...previous, ...page.data] : page.data));
      setHasMore(Boolean(page.has_more));
    } catch (err) {
      if (mine === latest.current) setError(errorText(err));
    } finally {
      if (mine === latest.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    setDraft(filters);
    void load(filters);
  }, [filters, load]);

  const field = (name: keyof Filters) => ({
    value: draft[name],
    onChange: (event: React.ChangeEvent<HTMLInputElement>) =>
      setDraft({ ...draft, [name]: event.currentTarget.value }),
  });

  return (
    <Stack>
      <Title order={2}>Logs</Title>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          const next = logsPage(draft);
          // The same filters again: their URL does not change, so load them again here.
          if (next === logsPage(filters)) void load(filters);
          else navigate(next);
        }}
      >
        <Group align="end">
          <TextInput label="Search metadata" name="search" placeholder="user, team, …" {...field('search')} />
          <TextInput label="Provider" name="provider" w={120} {...field('provider')} />
          <TextInput label="Model" name="model" w={160} {...field('model')} />
          <TextInput label="Status" name="status" w={80} {...field('status')} />
          <TextInput label="Trace id" name="trace_id" w={200} {...field('trace_id')} />
          <Select
            label="Time"
            name="range"
            w={100}
            data={Object.keys(RANGES)}
            value={draft.range}
            allowDeselect={false}
            onChange={(value) => setDraft({ ...draft, range: value ?? '24h' })}
          />
          <Button type="submit">Apply</Button>
          <Button variant="subtle" onClick={() => void load(filters)}>
            Refresh
          </Button>
        </Group>
      </form>
      {error && <Alert color="red">{error}</Alert>}
      <Table striped highlightOnHover data-testid="logs-table">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Time</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th>Endpoint</Table.Th>
            <Table.Th>Provider</Table.Th>
            <Table.Th>Model</Table.Th>
            <Table.Th>Latency</Table.Th>
            <Table.Th>Tokens</Table.Th>
            <Table.Th>Cost</Table.Th>
            <Table.Th>Metadata</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <WindowedRows rows={rows} columns={9} rowKey={logId} estimatedHeight={ROW_HEIGHT}>
          {(row, props) => (
            <Table.Tr
              {...props}
              style={{ cursor: 'pointer' }}
              data-log-id={row.id}
              onClick={() => navigate(`/logs/${row.id}`)}
            >
              <Table.Td>{formatTime(row.created_at_ms)}</Table.Td>
              <Table.Td>
                <Badge color={statusColor(row.status)} variant="light">
                  {row.status}
                </Badge>
                {row.is_attempt && (
                  <Badge ml={4} variant="outline" size="xs">
                    attempt
                  </Badge>
                )}
              </Table.Td>
              <Table.Td>{row.endpoint}</Table.Td>
              <Table.Td>{row.provider ?? '—'}</Table.Td>
              <Table.Td>{row.model ?? '—'}</Table.Td>
              <Table.Td>{row.latency_ms} ms</Table.Td>
              <Table.Td>{formatNumber(row.total_tokens)}</Table.Td>
              <Table.Td>{formatCost(row.cost)}</Table.Td>
              <Table.Td>
                <Text size="xs" c="dimmed" lineClamp={1}>
                  {Object.entries(row.metadata ?? {})
                    .map(([name, value]) => `${name}=${value}`)
                    .join(' ')}
                </Text>
              </Table.Td>
            </Table.Tr>
          )}
        </WindowedRows>
      </Table>
      {!loading && rows.length === 0 && !error && <Text c="dimmed">No log records match.</Text>}
      {hasMore && (
        <Button variant="light" loading={loading} onClick={() => void load(filters, rows.at(-1)?.id)}>
          Load more
        </Button>
      )}
    </Stack>
  );
}
