import type { Unit } from '../../../shared/schemas.ts';
import { assertNever } from '../../../shared/errors.ts';

/**
 * Moves a partition key (`2026-05-01`, `2026-05`, `2026-05-01T13`) by `n` units of wall-clock
 * calendar time. Used to reach back before a range (trailing medians); the result is read by
 * partitionRange in the job's zone, so DST is handled there.
 */
export function shiftBoundary(key: string, unit: Unit, n: number): string {
  const m = /^(\d{4})-(\d{2})(?:-(\d{2}))?(?:T(\d{2}))?/.exec(key);
  if (!m) throw new Error(`not a partition key: ${key}`);
  const [, y, mo, d = '01', h = '00'] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h)));
  switch (unit) {
    case 'hour':
      date.setUTCHours(date.getUTCHours() + n);
      return date.toISOString().slice(0, 13);
    case 'day':
      date.setUTCDate(date.getUTCDate() + n);
      return date.toISOString().slice(0, 10);
    case 'month':
      date.setUTCMonth(date.getUTCMonth() + n);
      return date.toISOString().slice(0, 7);
    default:
      return assertNever(unit, 'unit');
  }
}
