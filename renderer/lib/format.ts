/** Numbers and times, readable at a glance. */
export const int = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** '2026-11-30T12:00:00.000Z' → '2026-11-30 12:00:00 UTC' */
export function when(iso: string | null | undefined): string {
  if (!iso) return '–';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

export function measure(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '–';
  const n = Number(value);
  return Number.isFinite(n) && String(value).trim() !== '' ? n.toLocaleString('en-US', { maximumFractionDigits: 2 }) : String(value);
}

export function signed(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  return `${n > 0 ? '+' : ''}${int(n)}`;
}
