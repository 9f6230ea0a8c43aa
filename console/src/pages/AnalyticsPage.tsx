/** Requests, errors, cost, tokens and latency over time, and the top models and keys (GET /v1/analytics/…). */
import { AreaChart, BarChart, LineChart } from '@mantine/charts';
import { Alert, Card, Group, SegmentedControl, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useEffect, useState } from 'react';
import { api, errorText, query } from '../api';
import { formatCost, formatNumber } from '../format';
import { isAdmin, useSelf } from '../self';
import type { AnalyticsRow, ApiKey } from '../types';

/** `label`: how a bucket's start reads on the time axis; a day is a UTC day, as the gateway rolls it up. */
const RANGES: Record<string, { ms: number; interval: string; label: Intl.DateTimeFormatOptions }> = {
  '1h': { ms: 3_600_000, interval: 'minute', label: { hour: '2-digit', minute: '2-digit', hour12: false } },
  // A day's range has 25 hours: the weekday tells the first from the last.
  '24h': {
    ms: 86_400_000,
    interval: 'hour',
    label: { weekday: 'short', hour: '2-digit', minute: '2-digit', hour12: false },
  },
  '7d': {
    ms: 7 * 86_400_000,
    interval: 'hour',
    label: { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hour12: false },
  },
  '30d': { ms: 30 * 86_400_000, interval: 'day', label: { month: 'short', day: 'numeric', timeZone: 'UTC' } },
};
const TOP = 10;

interface Answer {
  data: AnalyticsRow[];
}

interface Timeseries extends Answer {
  from: string;
  to: string;
  interval_ms: number;
}

/**
 * A row for every bucket of the range: the gateway answers only the buckets that had requests, and a chart
 * of those alone would draw two requests a day apart side by side, and an empty range as nothing at all.
 */
function everyBucket(answer: Timeseries): AnalyticsRow[] {
  const rows = new Map(answer.data.map((row) => [row.bucket_ms, row]));
  const out: AnalyticsRow[] = [];
  for (let start = Date.parse(answer.from); start < Date.parse(answer.to); start += answer.interval_ms) {
    out.push(
      rows.get(start) ?? {
        bucket_ms: start,
        group: null,
        requests: 0,
        errors: 0,
        error_rate: 0,
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
        cost: 0,
        latency_ms: { avg: null, p50: null, p90: null, p95: null, p99: null },
      },
    );
  }
  return out;
}

function ChartCard({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Card withBorder padding="md">
      <Text fw={600} mb="sm">
        {title}
      </Text>
      {children}
    </Card>
  );
}

/** `rows` null: not loaded yet. */
function TopTable({ title, rows, testId }: { title: string; rows: AnalyticsRow[] | null; testId: string }) {
  return (
    <ChartCard title={title}>
      {rows === null || rows.length === 0 ? (
        <Text size="sm" c="dimmed" data-testid={testId}>
          {rows === null ? 'Loading…' : 'No requests in this range.'}
        </Text>
      ) : (
        <>
          <BarChart
            h={180}
            data={rows.map((row) => ({ name: row.group ?? '(none)', requests: row.requests }))}
            dataKey="name"
            series={[{ name: 'requests', color: 'indigo.6' }]}
          />
          <Table mt="sm" data-testid={testId}>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Requests</Table.Th>
                <Table.Th>Errors</Table.Th>
                <Table.Th>Tokens</Table.Th>
                <Table.Th>Cost</Table.Th>
                <Table.Th>p95 latency</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((row) => (
                <Table.Tr key={row.group ?? ''}>
                  <Table.Td>{row.group ?? '(none)'}</Table.Td>
                  <Table.Td>{formatNumber(row.requests)}</Table.Td>
                  <Table.Td>{formatNumber(row.errors)}</Table.Td>
                  <Table.Td>{formatNumber(row.total_tokens)}</Table.Td>
                  <Table.Td>{formatCost(row.cost)}</Table.Td>
                  <Table.Td>{row.latency_ms.p95 === null ? '—' : `${row.latency_ms.p95} ms`}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </>
      )}
    </ChartCard>
  );
}

export function AnalyticsPage() {
  const self = useSelf();
  const admin = isAdmin(self);
  const [range, setRange] = useState('24h');
  const [series, setSeries] = useState<AnalyticsRow[]>([]);
  const [models, setModels] = useState<AnalyticsRow[] | null>(null);
  const [keys, setKeys] = useState<AnalyticsRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    /**
     * The name of a top key, by its id: a member key knows its own name and may not read others'; an
     * admin key asks for each of the few top keys rather than listing every key of the workspace, which
     * may be tens of thousands. A key deleted since is shown by its id.
     */
    const keyName = async (id: string | null): Promise<string | null> => {
      if (id === null) return null;
      if (id === self.id) return self.name;
      if (!admin) return id;
      return api<ApiKey>(`/api-keys/${encodeURIComponent(id)}`).then(
        (key) => key.name,
        () => id,
      );
    };
    const { ms, interval } = RANGES[range];
    const to = Date.now();
    const window = { from: to - ms, to };
    const top = (rows: AnalyticsRow[]) => [...rows].sort((a, b) => b.requests - a.requests).slice(0, TOP);
    Promise.all([
      api<Timeseries>(`/analytics/timeseries${query({ ...window, interval })}`),
      api<Answer>(`/analytics/summary${query({ ...window, group_by: 'model' })}`),
      api<Answer>(`/analytics/summary${query({ ...window, group_by: 'api_key' })}`).then((byKey) =>
        Promise.all(
          top(byKey.data).map(async (row) => (row.other ? row : { ...row, group: await keyName(row.group) })),
        ),
      ),
    ])
      .then(([timeseries, byModel, topKeys]) => {
        if (!live) return;
        setError(null);
        setSeries(everyBucket(timeseries));
        setModels(top(byModel.data));
        setKeys(topKeys);
      })
      .catch((err: unknown) => live && setError(errorText(err)));
    return () => {
      live = false;
    };
  }, [range, self, admin]);

  const points = series.map((row) => ({
    time: new Date(row.bucket_ms ?? 0).toLocaleString(undefined, RANGES[range].label),
    requests: row.requests,
    errors: row.errors,
    cost: row.cost,
    prompt: row.prompt_tokens,
    completion: row.completion_tokens,
    p50: row.latency_ms.p50,
    p95: row.latency_ms.p95,
  }));
  const totals = series.reduce(
    (sum, row) => ({
      requests: sum.requests + row.requests,
      errors: sum.errors + row.errors,
      tokens: sum.tokens + row.total_tokens,
      cost: sum.cost + row.cost,
    }),
    { requests: 0, errors: 0, tokens: 0, cost: 0 },
  );

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Analytics</Title>
        <SegmentedControl value={range} onChange={setRange} data={Object.keys(RANGES)} />
      </Group>
      {error && <Alert color="red">{error}</Alert>}
      <SimpleGrid cols={4} data-testid="analytics-totals">
        <ChartCard title="Requests">{formatNumber(totals.requests)}</ChartCard>
        <ChartCard title="Errors">{formatNumber(totals.errors)}</ChartCard>
        <ChartCard title="Tokens">{formatNumber(totals.tokens)}</ChartCard>
        <ChartCard title="Cost">{formatCost(totals.cost)}</ChartCard>
      </SimpleGrid>
      <SimpleGrid cols={2}>
        <ChartCard title="Requests and errors">
          <AreaChart
            h={200}
            data={points}
            dataKey="time"
            series={[
              { name: 'requests', color: 'blue.6' },
              { name: 'errors', color: 'red.6' },
            ]}
          />
        </ChartCard>
        <ChartCard title="Cost (US$)">
          <LineChart h={200} data={points} dataKey="time" series={[{ name: 'cost', color: 'teal.6' }]} />
        </ChartCard>
        <ChartCard title="Tokens">
          <BarChart
            h={200}
            data={points}
            dataKey="time"
            type="stacked"
            series={[
              { name: 'prompt', color: 'violet.6' },
              { name: 'completion', color: 'grape.4' },
            ]}
          />
        </ChartCard>
        <ChartCard title="Latency (ms)">
          <LineChart
            h={200}
            data={points}
            dataKey="time"
            series={[
              { name: 'p50', color: 'cyan.6' },
              { name: 'p95', color: 'orange.6' },
            ]}
          />
        </ChartCard>
      </SimpleGrid>
      <SimpleGrid cols={2}>
        <TopTable title="Top models" rows={models} testId="top-models" />
        <TopTable title="Top API keys" rows={keys} testId="top-keys" />
      </SimpleGrid>
    </Stack>
  );
}
