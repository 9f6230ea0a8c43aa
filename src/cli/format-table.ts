/** Plain-text tables for people; `--json` gives machines the API's own JSON instead. */
export interface Column<T> {
  header: string;
  value(row: T): unknown;
}

function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length ? value.join(',') : '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value).replace(/\s+/g, ' ');
}

export function formatTable<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((row) => columns.map((column) => cell(column.value(row))));
  const widths = columns.map((column, i) =>
    Math.max(column.header.length, ...cells.map((line) => line[i].length)),
  );
  const render = (line: string[]) =>
    line
      .map((text, i) => (i === line.length - 1 ? text : text.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return `${[render(columns.map((c) => c.header)), ...cells.map(render)].join('\n')}\n`;
}

/** One record as `field: value` lines. */
export function formatRecord(record: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(record).map((key) => key.length));
  return `${Object.entries(record)
    .map(([key, value]) => `${key.padEnd(width)}  ${cell(value)}`)
    .join('\n')}\n`;
}

export function formatTime(seconds: unknown): string {
  return typeof seconds === 'number' ? new Date(seconds * 1000).toISOString().replace('.000Z', 'Z') : '-';
}
