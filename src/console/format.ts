/** Small display helpers for numbers and times (local time zone; "—" for unknown). */
export function num(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toLocaleString('en-US');
}

export function ms(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${value} ms`;
}

export function percent(rate: number): string {
  return `${(rate * 100).toFixed(rate === 0 ? 0 : 1)} %`;
}

export function time(iso: string | null | undefined): string {
  if (iso === null || iso === undefined) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString('en-GB', { hour12: false });
}
