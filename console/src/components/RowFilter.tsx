/**
 * A filter over every row of a table, not only those on screen (WindowedRows puts few in the page, so the
 * browser's own find sees few): a row matches when the text of its cells contains the filter, in any case.
 */
import { Group, Text, TextInput } from '@mantine/core';
import { useDeferredValue, useMemo, useState } from 'react';
import { formatNumber } from '../format';

export function useRowFilter<T>(rows: readonly T[], textOf: (row: T) => string[]) {
  const [filter, setFilter] = useState('');
  const searchable = useMemo(() => rows.map((row) => textOf(row).join('\n').toLowerCase()), [rows, textOf]);
  // Typing stays quick while tens of thousands of rows are filtered behind it.
  const wanted = useDeferredValue(filter.trim().toLowerCase());
  const matching = useMemo(
    () => (wanted ? rows.filter((_, index) => searchable[index].includes(wanted)) : rows),
    [rows, searchable, wanted],
  );
  return { filter, setFilter, filtered: wanted !== '', matching };
}

/** The filter's input and how many rows it keeps; `more`: rows are still being loaded. */
export function RowFilter({
  filter,
  setFilter,
  filtered,
  matching,
  total,
  more = false,
}: {
  filter: string;
  setFilter(value: string): void;
  filtered: boolean;
  matching: number;
  total: number;
  more?: boolean;
}) {
  return (
    <Group justify="space-between" align="end">
      <TextInput
        label="Filter"
        name="filter"
        placeholder="any column, any case"
        w={320}
        value={filter}
        onChange={(event) => setFilter(event.currentTarget.value)}
      />
      <Text size="sm" c="dimmed" data-testid="row-count">
        {filtered
          ? `${formatNumber(matching)} of ${formatNumber(total)}`
          : `${formatNumber(total)} ${more ? 'so far' : 'in all'}`}
      </Text>
    </Group>
  );
}
