/**
 * Lays partitions out like a calendar: daily partitions in weeks (Monday first), hourly ones
 * in days of 24 hours, monthly ones in years of 12 months. Pure, so it is tested alone.
 * A repeated wall-clock partition ('2026-11-01T01+1', a DST fall-back) shares its slot; the
 * slot shows the most urgent status of the partitions in it, so a failure is never hidden.
 */
import type { PartitionStatusName } from '../../shared/contractTypes.ts';

export type CalendarUnit = 'hour' | 'day' | 'month';

export interface CalendarRow {
  label: string;
  /** per column: indexes into the partitions list (empty where the range has no partition) */
  slots: number[][];
}

export interface Calendar {
  columns: string[];
  rows: CalendarRow[];
}

const DAY = 86_400_000;
const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Most urgent first: what a slot shows when it holds more than one partition. */
const URGENCY: PartitionStatusName[] = ['failed', 'running', 'validated', 'pending', 'published', 'skipped'];

export function slotStatus(statuses: PartitionStatusName[]): PartitionStatusName {
  return URGENCY.find((s) => statuses.includes(s)) ?? 'pending';
}

const base = (key: string) => key.replace(/\+\d+$/, '');

function dayNumber(ymd: string): number {
  const [y, m, d] = ymd.split('-').map(Number) as [number, number, number];
  return Math.floor(Date.UTC(y, m - 1, d) / DAY);
}

const ymdOf = (dayNo: number) => new Date(dayNo * DAY).toISOString().slice(0, 10);

export function layoutCalendar(unit: CalendarUnit, keys: readonly string[]): Calendar {
  if (keys.length === 0) return { columns: [], rows: [] };
  // position of each partition: [row number, column]
  const place = (key: string): [number, number] => {
    const k = base(key);
    if (unit === 'month') {
      const [y, m] = k.split('-').map(Number) as [number, number];
      return [y, m - 1];
    }
    if (unit === 'hour') return [dayNumber(k.slice(0, 10)), Number(k.slice(11, 13))];
    const n = dayNumber(k);
    const weekday = (new Date(n * DAY).getUTCDay() + 6) % 7;
    return [n - weekday, weekday];
  };
  const placed = keys.map(place);
  const rowNumbers = placed.map(([r]) => r);
  const first = Math.min(...rowNumbers);
  const last = Math.max(...rowNumbers);
  const step = unit === 'day' ? 7 : 1;
  const width = unit === 'day' ? 7 : unit === 'hour' ? 24 : 12;
  const rows: CalendarRow[] = [];
  const index = new Map<number, CalendarRow>();
  for (let r = first; r <= last; r += step) {
    const row = { label: unit === 'month' ? String(r) : ymdOf(r), slots: Array.from({ length: width }, () => [] as number[]) };
    rows.push(row);
    index.set(r, row);
  }
  placed.forEach(([r, c], i) => index.get(r)?.slots[c]?.push(i));
  const columns = unit === 'day' ? WEEKDAYS : unit === 'month' ? MONTHS : Array.from({ length: 24 }, (_, h) => String(h).padStart(2, '0'));
  return { columns, rows };
}
