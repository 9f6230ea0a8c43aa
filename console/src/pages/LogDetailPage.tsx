/** One log record: the request, the answer, the attempts of its trace, hook results, cost and trace id. */
import { Alert, Anchor, Badge, Code, Group, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useEffect, useState } from 'react';
import { Link } from 'wouter';
import { api, errorText, query, type ListAnswer } from '../api';
import { formatCost, formatNumber, formatTime, statusColor } from '../format';
import type { LogRecord } from '../types';
import { logsPage } from './LogsPage';

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" component="div">
        {children}
      </Text>
    </div>
  );
}

function JsonBlock({ title, value }: { title: string; value: unknown }) {
  return (
    <Stack gap={4}>
      <Title order={4}>{title}</Title>
      {value === null || value === undefined ? (
        <Text size="sm" c="dimmed">
          Not recorded.
        </Text>
      ) : (
        <Code block data-testid={`json-${title.toLowerCase().replace(/\s+/g, '-')}`} mah={400}>
          {JSON.stringify(value, null, 2)}
        </Code>
      )}
    </Stack>
  );
}

/** Other records of the trace shown besides the call's own. */
const OTHERS_SHOWN = 100;

/**
 * Pages through the records of `record`'s trace within `window`, newest first, handing each to `visit` until
 * it answers true.
 */
async function scanTrace(
  record: LogRecord,
  window: { from_ms?: number; to_ms: number },
  visit: (other: LogRecord) => boolean,
): Promise<void> {
  let after: string | undefined;
  do {
    const page = await api<ListAnswer<LogRecord>>(
      `/logs${query({ trace_id: record.trace_id, ...window, limit: 1000, after })}`,
    );
    if (page.data.some(visit)) return;
    after = page.has_more ? page.data.at(-1)?.id : undefined;
  } while (after);
}

/**
 * The records of `record`'s call, however many share its trace id: a request's attempts started while it
 * ran; an attempt's request is the record of its parent span that started before it.
 */
async function callRecords(record: LogRecord): Promise<LogRecord[]> {
  let request: LogRecord | undefined = record;
  if (record.parent_span_id) {
    request = undefined;
    await scanTrace(record, { to_ms: record.created_at_ms }, (other) => {
      if (other.span_id === record.parent_span_id) request = other;
      return request !== undefined;
    });
  }
  if (!request) return [];
  const call: LogRecord[] = [request];
  const { span_id, created_at_ms, latency_ms } = request;
  await scanTrace(
    request,
    { from_ms: created_at_ms, to_ms: created_at_ms + Math.ceil(latency_ms) },
    (other) => {
      if (other.parent_span_id === span_id) call.push(other);
      return false;
    },
  );
  return call;
}

/** The other records of `record`'s trace, oldest first: all of its own call, and the trace's newest others. */
async function traceRecords(record: LogRecord): Promise<LogRecord[]> {
  const [call, newest] = await Promise.all([
    callRecords(record),
    api<ListAnswer<LogRecord>>(`/logs${query({ trace_id: record.trace_id, limit: OTHERS_SHOWN })}`),
  ]);
  const byId = new Map([...newest.data, ...call].map((other) => [other.id, other]));
  byId.delete(record.id);
  return [...byId.values()].sort((a, b) => a.created_at_ms - b.created_at_ms);
}

export function LogDetailPage({ id }: { id: string }) {
  const [record, setRecord] = useState<LogRecord | null>(null);
  const [trace, setTrace] = useState<LogRecord[]>([]);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    (async () => {
      try {
        const found = await api<LogRecord>(`/logs/${encodeURIComponent(id)}`);
        const others = await traceRecords(found);
        if (!live) return;
        setRecord(found);
        setTrace(others);
      } catch (err) {
        if (live) setError(errorText(err));
      }
    })();
    return () => {
      live = false;
    };
  }, [id]);

  if (error) return <Alert color="red">{error}</Alert>;
  if (!record) return <Text c="dimmed">Loading…</Text>;

  return (
    <Stack>
      <Group>
        <Anchor component={Link} href="/logs" size="sm">
          ← Logs
        </Anchor>
      </Group>
      <Group>
        <Title order={2}>Log {record.id}</Title>
        <Badge color={statusColor(record.status)} size="lg" data-testid="log-status">
          {record.status}
        </Badge>
      </Group>
      <SimpleGrid cols={4} spacing="sm">
        <Field label="Time">{formatTime(record.created_at_ms)}</Field>
        <Field label="Endpoint">
          {record.method} {record.path}
        </Field>
        <Field label="Provider / model">
          {record.provider ?? '—'} / {record.model ?? '—'}
        </Field>
        <Field label="Target">{record.target ?? '—'}</Field>
        <Field label="Latency">
          {record.latency_ms} ms{record.ttfb_ms !== null ? ` (first byte ${record.ttfb_ms} ms)` : ''}
        </Field>
        <Field label="Tokens (prompt / completion / total)">
          {formatNumber(record.prompt_tokens)} / {formatNumber(record.completion_tokens)} /{' '}
          {formatNumber(record.total_tokens)}
          {record.cached_tokens ? `, ${record.cached_tokens} cached` : ''}
        </Field>
        <Field label="Cost">
          <span data-testid="log-cost">{formatCost(record.cost)}</span>
        </Field>
        <Field label="Cache">{record.cache_status ?? '—'}</Field>
        <Field label="Trace id">
          <Code data-testid="log-trace-id">{record.trace_id}</Code>{' '}
          <Anchor component={Link} href={logsPage({ trace_id: record.trace_id, range: 'all' })} size="xs">
            all its records
          </Anchor>
        </Field>
        <Field label="Span">
          {record.span_name ?? '—'} <Code>{record.span_id}</Code>
        </Field>
        <Field label="API key">{record.api_key_id ?? '—'}</Field>
        <Field label="Retries">{record.retry_count}</Field>
        {record.prompt_id && (
          <Field label="Prompt">
            {record.prompt_id} v{record.prompt_version}
          </Field>
        )}
        {record.error_code && (
          <Field label="Error">
            {record.error_code}: {record.error_message}
          </Field>
        )}
      </SimpleGrid>
      <JsonBlock title="Metadata" value={record.metadata} />
      <Title order={4}>Attempts and other records of this trace</Title>
      {trace.length === 0 ? (
        <Text size="sm" c="dimmed">
          This record is the trace&apos;s only one: the call was answered by its first attempt.
        </Text>
      ) : (
        <Table data-testid="attempts-table">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Record</Table.Th>
              <Table.Th>Kind</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Provider / model</Table.Th>
              <Table.Th>Target</Table.Th>
              <Table.Th>Latency</Table.Th>
              <Table.Th>Error</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {trace.map((other) => (
              <Table.Tr key={other.id}>
                <Table.Td>
                  <Anchor component={Link} href={`/logs/${other.id}`} size="sm">
                    {other.id}
                  </Anchor>
                </Table.Td>
                <Table.Td>{other.is_attempt ? 'attempt' : 'request'}</Table.Td>
                <Table.Td>
                  <Badge color={statusColor(other.status)} variant="light">
                    {other.status}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  {other.provider ?? '—'} / {other.model ?? '—'}
                </Table.Td>
                <Table.Td>{other.target ?? '—'}</Table.Td>
                <Table.Td>{other.latency_ms} ms</Table.Td>
                <Table.Td>{other.error_code ?? ''}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <JsonBlock title="Request" value={record.request_body} />
      <JsonBlock title="Answer" value={record.response_body} />
      <JsonBlock title="Hook results" value={record.hook_results} />
    </Stack>
  );
}
