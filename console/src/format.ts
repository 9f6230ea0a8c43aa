/** How numbers and times read in the console. */
export function formatTime(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { hour12: false });
}

export function formatUnixSeconds(seconds: number | null | undefined): string {
  return seconds ? formatTime(seconds * 1000) : '—';
}

export function formatCost(cost: number | null | undefined): string {
  if (cost === null || cost === undefined) return '—';
  return `$${cost < 0.01 ? cost.toPrecision(3) : cost.toFixed(4)}`;
}

export function formatNumber(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toLocaleString();
}

export function statusColor(status: number): string {
  if (status >= 500) return 'red';
  if (status >= 400 || status === 246) return 'orange';
  return 'green';
}
