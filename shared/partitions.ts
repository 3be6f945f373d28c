// Half-open partition ranges in an explicit IANA time zone, using only Intl.
//
// A partition is one local wall-clock hour, day or month. Its boundaries are the instants at
// which the local clock reads the boundary's wall time:
// - a wall time skipped by a DST jump (02:00 on a spring-forward night, or a midnight that
//   does not exist, as in America/Sao_Paulo until 2018) maps to the first real instant after
//   it, so that partition is shorter (or empty, and then left out);
// - a wall time that occurs twice (fall-back) starts a partition on each occurrence; the
//   second occurrence's key gets a suffix so keys stay unique: '2026-11-01T01' is 01:00-02:00
//   EDT and '2026-11-01T01+1' is 01:00-02:00 EST in America/New_York. Days and months can
//   only repeat in zones that fall back across midnight, and get the same suffix.
// `from` and `to` are local wall-clock times too; one that occurs twice means its first occurrence.
// Every real instant in [from, to) falls in exactly one partition, and a partition's key does not
// depend on the range that asked for it (resume and reruns find the same keys).
import { InputError, showValue } from './errors.ts';
import type { Unit } from './schemas.ts';

export interface Partition {
  /** day '2026-05-01', month '2026-05', hour '2026-05-01T13' (local wall clock; '+1' on a repeat) */
  key: string;
  /** local wall clock with the zone's offset, e.g. '2026-05-01T00:00:00+09:00' */
  start: string;
  /** exclusive; equals the next partition's start */
  end: string;
}

export const MAX_PARTITIONS = 100_000;

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const UNIT_WORD: Record<Unit, string> = { hour: 'hourly', day: 'daily', month: 'monthly' };
const FORMATS_HINT = 'YYYY-MM-DD, YYYY-MM (month) or YYYY-MM-DDTHH (hour)';
const BOUNDARY = /^(\d{4})-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2}))?)?)?$/;

/** True when text has one of the shapes partitionRange accepts (calendar not checked). */
export function looksLikeBoundary(text: string): boolean {
  return BOUNDARY.test(text.trim());
}

/** The instant (ms since epoch) of a timestamp with an offset, as in Partition.start/end. */
export function instantOf(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:Z|([+-])(\d{2}):(\d{2})(?::(\d{2}))?)$/.exec(text);
  if (!m) throw new Error(`not a timestamp with an offset: ${showValue(text)}`);
  const n = (i: number) => Number(m[i] ?? 0);
  const local = Date.UTC(n(1), n(2) - 1, n(3), n(4), n(5), n(6));
  const offset = (n(8) * 3600 + n(9) * 60 + n(10)) * 1000 * (m[7] === '-' ? -1 : 1);
  return local - offset;
}

/**
 * The instant a range boundary (`2026-05-01`, `2026-05`, `2026-05-01T13`) falls on in the zone,
 * read as partitionRange reads `from` and `to`; `field` names it in the error for a bad one.
 */
export function boundaryInstant(raw: string, unit: Unit, timeZone: string, field: string): number {
  const wall = parseBoundary(raw, unit, field, field);
  return (zoneClock(timeZone).instantsOf(wall)[0] as { t: number }).t;
}

export function partitionRange(
  range: { from: string; to: string },
  unit: Unit,
  timeZone: string,
  labels: { from: string; to: string } = { from: '--from', to: '--to' },
): Partition[] {
  const clock = zoneClock(timeZone);
  const from = parseBoundary(range.from, unit, labels.from, 'range.from');
  const to = parseBoundary(range.to, unit, labels.to, 'range.to');
  if (from >= to) {
    throw new InputError(
      `${labels.from} ${range.from.trim()} is not before ${labels.to} ${range.to.trim()}: the range is half-open, from <= t < to`,
      {
        field: 'range.to',
        value: range.to,
      },
    );
  }
  const wallCount = countSteps(from, to, unit);
  if (wallCount > MAX_PARTITIONS) throw tooMany(range, wallCount, unit);

  const fromI = clock.instantsOf(from)[0] as { t: number; offset: number };
  const toI = clock.instantsOf(to)[0] as { t: number; offset: number };
  // Walls a few steps before `from` are included so a repeated hour that began before `from`
  // but recurs inside the range keeps its global key (Antarctica/Troll falls back 2 hours).
  const entries: { t: number; offset: number; key: string }[] = [];
  for (let w = step(from, unit, -3); w < to; w = step(w, unit, 1)) {
    clock.instantsOf(w).forEach((at, i) => {
      if (at.t >= fromI.t && at.t < toI.t) entries.push({ ...at, key: i === 0 ? keyOf(w, unit) : `${keyOf(w, unit)}+${i}` });
    });
  }
  // Stable sort; at equal instants the later wall wins (02:00 skipped → same instant as 03:00).
  entries.sort((a, b) => a.t - b.t);
  const bounds = entries.filter((e, i) => entries[i + 1]?.t !== e.t);
  if (bounds.length === 0) {
    throw new InputError(
      `${labels.from} ${range.from.trim()} to ${labels.to} ${range.to.trim()} is empty in ${timeZone}: that local time does not exist (the clocks skip it)`,
      {
        field: 'range.from',
        value: range.from,
      },
    );
  }
  if (bounds.length > MAX_PARTITIONS) throw tooMany(range, bounds.length, unit);
  const starts = bounds.map(clock.iso);
  const end = clock.iso(toI);
  return bounds.map((b, i) => ({ key: b.key, start: starts[i] as string, end: starts[i + 1] ?? end }));
}

/** "61 daily partitions, 2026-05-01 to 2026-06-30 inclusive" */
export function describeRange(partitions: Partition[], unit: Unit): string {
  const first = partitions[0];
  const last = partitions[partitions.length - 1];
  if (!first || !last) return 'no partitions';
  if (partitions.length === 1) return `1 ${UNIT_WORD[unit]} partition, ${first.key}`;
  return `${partitions.length} ${UNIT_WORD[unit]} partitions, ${first.key} to ${last.key} inclusive`;
}

/** Real elapsed days from the first partition's start to the last one's end (23-hour days count as such). */
export function rangeDays(partitions: Partition[]): number {
  const first = partitions[0];
  const last = partitions[partitions.length - 1];
  if (!first || !last) return 0;
  return (instantOf(last.end) - instantOf(first.start)) / DAY_MS;
}

/** Parses a boundary into its wall clock as ms "as if UTC"; checks calendar and alignment. */
function parseBoundary(raw: string, unit: Unit, label: string, field: string): number {
  const text = raw.trim();
  const m = BOUNDARY.exec(text);
  if (!m) {
    throw new InputError(`${label} ${showValue(raw)} is not a date: use ${FORMATS_HINT}`, { field, value: raw });
  }
  const [y, mo, d, h, mi] = [m[1], m[2], m[3] ?? '01', m[4] ?? '00', m[5] ?? '00'].map(Number) as [number, number, number, number, number];
  const monthDays = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (y < 1000 || mo < 1 || mo > 12 || d < 1 || d > monthDays || h > 23 || mi > 59) {
    const why = mo >= 1 && mo <= 12 && d > monthDays ? `: ${MONTHS[mo - 1]} ${y} has ${monthDays} days` : '';
    throw new InputError(`${label} ${text} is not a real date${why}`, { field, value: raw });
  }
  const misaligned =
    mi !== 0 ? 'an hour' : unit === 'day' && h !== 0 ? 'a day' : unit === 'month' && (h !== 0 || d !== 1) ? 'a month' : undefined;
  if (misaligned) {
    const rule =
      unit === 'hour'
        ? 'hourly partitions start on the hour'
        : unit === 'day'
          ? 'daily partitions start at local midnight'
          : 'monthly partitions start on the 1st at local midnight';
    throw new InputError(`${label} ${text} is not on ${misaligned} boundary: ${rule}`, { field, value: raw });
  }
  return Date.UTC(y, mo - 1, d, h);
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function step(wall: number, unit: Unit, n: number): number {
  if (unit === 'hour') return wall + n * HOUR_MS;
  const d = new Date(wall);
  if (unit === 'day') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + n);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1);
}

function countSteps(from: number, to: number, unit: Unit): number {
  if (unit === 'hour') return Math.round((to - from) / HOUR_MS);
  if (unit === 'day') return Math.round((to - from) / DAY_MS);
  const a = new Date(from);
  const b = new Date(to);
  return (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + b.getUTCMonth() - a.getUTCMonth();
}

function keyOf(wall: number, unit: Unit): string {
  const iso = new Date(wall).toISOString();
  return unit === 'hour' ? iso.slice(0, 13) : unit === 'day' ? iso.slice(0, 10) : iso.slice(0, 7);
}

function tooMany(range: { from: string; to: string }, count: number, unit: Unit): InputError {
  return new InputError(
    `range ${range.from.trim()} to ${range.to.trim()} has ${count} ${UNIT_WORD[unit]} partitions, over the limit of ${MAX_PARTITIONS}: split it into smaller plans`,
    { field: 'range', value: range },
  );
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Offsets and wall-clock lookups for one zone. Offsets are cached on a 12-hour grid. */
function zoneClock(timeZone: string) {
  let fmt = formatters.get(timeZone);
  // UTC, the default zone, is offset 0 everywhere: no formatter (ICU's zone data costs ~20 ms to load)
  if (!fmt && timeZone !== 'UTC') {
    try {
      fmt = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new InputError(
        `time zone ${showValue(timeZone)} is not a known IANA zone: use a name like UTC, Asia/Seoul or America/New_York`,
        { field: 'timezone', value: timeZone },
      );
    }
    formatters.set(timeZone, fmt);
  }
  const format = fmt;
  const grid = new Map<number, number>();
  const HALF_DAY = 12 * HOUR_MS;

  /** local wall clock minus UTC, in ms, at instant t (whole seconds) */
  const offsetAt = (t: number): number => {
    if (format === undefined) return 0;
    const parts = format.formatToParts(t);
    const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value);
    const local = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
    return local - (t - (((t % 1000) + 1000) % 1000));
  };
  const gridOffset = (g: number): number => {
    let o = grid.get(g);
    if (o === undefined) grid.set(g, (o = offsetAt(g)));
    return o;
  };

  /**
   * Every instant whose local clock reads `wall`, ascending, with the offset there; for a
   * skipped wall time, the first instant after it.
   * **Hazard**: offsets are sampled every 12 hours around `wall`; a zone that changed its
   * offset and changed it back within 12 hours would be missed (tzdata has no such case).
   */
  const instantsOf = (wall: number): { t: number; offset: number }[] => {
    const g0 = Math.floor(wall / HALF_DAY) * HALF_DAY;
    const first = gridOffset(g0);
    let steady = true;
    for (let k = -2; k <= 3 && steady; k++) steady = gridOffset(g0 + k * HALF_DAY) === first;
    // Fast path: one offset for 60 hours around, so the wall time occurs exactly once.
    if (steady) return [{ t: wall - first, offset: first }];
    const offsets = new Set<number>();
    for (let k = -2; k <= 3; k++) offsets.add(gridOffset(g0 + k * HALF_DAY));
    const valid = [...offsets].filter((o) => offsetAt(wall - o) === o).map((o) => ({ t: wall - o, offset: o }));
    if (valid.length > 0) return valid.sort((a, b) => a.t - b.t);
    // In a gap: the local clock runs from below `wall` to above it between lo and hi.
    let lo = (wall - Math.max(...offsets)) / 1000;
    let hi = (wall - Math.min(...offsets)) / 1000;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (mid * 1000 + offsetAt(mid * 1000) >= wall) hi = mid;
      else lo = mid;
    }
    return [{ t: hi * 1000, offset: offsetAt(hi * 1000) }];
  };

  /** '2026-05-01T00:00:00+09:00'; seconds appear in the offset only for old local mean times */
  const iso = ({ t, offset }: { t: number; offset: number }): string => {
    const local = new Date(t + offset).toISOString().slice(0, 19);
    const abs = Math.abs(offset) / 1000;
    const pad = (n: number) => String(n).padStart(2, '0');
    const secs = abs % 60 === 0 ? '' : `:${pad(abs % 60)}`;
    return `${local}${offset < 0 ? '-' : '+'}${pad(Math.floor(abs / 3600))}:${pad(Math.floor(abs / 60) % 60)}${secs}`;
  };

  return { instantsOf, iso };
}
