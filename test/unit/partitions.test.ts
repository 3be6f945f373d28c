import { describe, expect, it } from 'vitest';
import { InputError } from '../../shared/errors.ts';
import { describeRange, instantOf, MAX_PARTITIONS, partitionRange, rangeDays, type Partition } from '../../shared/partitions.ts';
import type { Unit } from '../../shared/schemas.ts';

const keys = (ps: Partition[]) => ps.map((p) => p.key);
const hours = (p: Partition) => (instantOf(p.end) - instantOf(p.start)) / 3_600_000;

describe('partitionRange: calendar', () => {
  const cases: {
    name: string;
    from: string;
    to: string;
    unit: Unit;
    zone: string;
    keys: string[];
    first?: Partial<Partition>;
    last?: Partial<Partition>;
  }[] = [
    {
      name: 'days in Seoul carry +09:00',
      from: '2026-05-01',
      to: '2026-05-03',
      unit: 'day',
      zone: 'Asia/Seoul',
      keys: ['2026-05-01', '2026-05-02'],
      first: { start: '2026-05-01T00:00:00+09:00', end: '2026-05-02T00:00:00+09:00' },
      last: { start: '2026-05-02T00:00:00+09:00', end: '2026-05-03T00:00:00+09:00' },
    },
    {
      name: 'UTC is written +00:00',
      from: '2026-05-01',
      to: '2026-05-02',
      unit: 'day',
      zone: 'UTC',
      keys: ['2026-05-01'],
      first: { start: '2026-05-01T00:00:00+00:00', end: '2026-05-02T00:00:00+00:00' },
    },
    {
      name: 'a month end',
      from: '2026-01-30',
      to: '2026-02-02',
      unit: 'day',
      zone: 'UTC',
      keys: ['2026-01-30', '2026-01-31', '2026-02-01'],
    },
    { name: 'a year end', from: '2026-12-31', to: '2027-01-02', unit: 'day', zone: 'UTC', keys: ['2026-12-31', '2027-01-01'] },
    { name: 'leap day 2028', from: '2028-02-28', to: '2028-03-01', unit: 'day', zone: 'UTC', keys: ['2028-02-28', '2028-02-29'] },
    { name: 'no leap day 2026', from: '2026-02-28', to: '2026-03-01', unit: 'day', zone: 'UTC', keys: ['2026-02-28'] },
    {
      name: 'months across January 31',
      from: '2026-01',
      to: '2026-04',
      unit: 'month',
      zone: 'UTC',
      keys: ['2026-01', '2026-02', '2026-03'],
      first: { start: '2026-01-01T00:00:00+00:00', end: '2026-02-01T00:00:00+00:00' },
      last: { start: '2026-03-01T00:00:00+00:00', end: '2026-04-01T00:00:00+00:00' },
    },
    {
      name: 'months given as first days',
      from: '2026-11-01',
      to: '2027-02-01',
      unit: 'month',
      zone: 'Asia/Seoul',
      keys: ['2026-11', '2026-12', '2027-01'],
    },
    { name: 'a day given as a month', from: '2026-02', to: '2026-02-03', unit: 'day', zone: 'UTC', keys: ['2026-02-01', '2026-02-02'] },
    {
      name: 'hours across midnight, both hour forms',
      from: '2026-05-01T22',
      to: '2026-05-02T02:00',
      unit: 'hour',
      zone: 'UTC',
      keys: ['2026-05-01T22', '2026-05-01T23', '2026-05-02T00', '2026-05-02T01'],
      last: { start: '2026-05-02T01:00:00+00:00', end: '2026-05-02T02:00:00+00:00' },
    },
    { name: 'hours from a date', from: '2026-02-28T23', to: '2026-03-01', unit: 'hour', zone: 'UTC', keys: ['2026-02-28T23'] },
    {
      name: 'Kathmandu +05:45',
      from: '2026-05-01T00',
      to: '2026-05-01T01',
      unit: 'hour',
      zone: 'Asia/Kathmandu',
      keys: ['2026-05-01T00'],
      first: { start: '2026-05-01T00:00:00+05:45', end: '2026-05-01T01:00:00+05:45' },
    },
    { name: 'whitespace around dates', from: ' 2026-05-01 ', to: '2026-05-02\n', unit: 'day', zone: 'UTC', keys: ['2026-05-01'] },
  ];
  it.each(cases)('$name', (c) => {
    const ps = partitionRange({ from: c.from, to: c.to }, c.unit, c.zone);
    expect(keys(ps)).toEqual(c.keys);
    if (c.first) expect(ps[0]).toMatchObject(c.first);
    if (c.last) expect(ps[ps.length - 1]).toMatchObject(c.last);
  });
});

describe('partitionRange: daylight saving time', () => {
  it('New York spring forward: the day is 23 hours and hour 02 does not exist', () => {
    const day = partitionRange({ from: '2026-03-08', to: '2026-03-09' }, 'day', 'America/New_York');
    expect(day).toEqual([{ key: '2026-03-08', start: '2026-03-08T00:00:00-05:00', end: '2026-03-09T00:00:00-04:00' }]);
    expect(rangeDays(day)).toBeCloseTo(23 / 24, 12);

    const hs = partitionRange({ from: '2026-03-08', to: '2026-03-09' }, 'hour', 'America/New_York');
    expect(hs).toHaveLength(23);
    expect(hs.every((p) => hours(p) === 1)).toBe(true);
    expect(keys(hs).slice(0, 4)).toEqual(['2026-03-08T00', '2026-03-08T01', '2026-03-08T03', '2026-03-08T04']);
    expect(hs[1]).toEqual({ key: '2026-03-08T01', start: '2026-03-08T01:00:00-05:00', end: '2026-03-08T03:00:00-04:00' });
  });

  it('New York fall back: the day is 25 hours and the repeated hour gets +1', () => {
    const day = partitionRange({ from: '2026-11-01', to: '2026-11-02' }, 'day', 'America/New_York');
    expect(day).toEqual([{ key: '2026-11-01', start: '2026-11-01T00:00:00-04:00', end: '2026-11-02T00:00:00-05:00' }]);
    expect(rangeDays(day)).toBeCloseTo(25 / 24, 12);

    const hs = partitionRange({ from: '2026-11-01', to: '2026-11-02' }, 'hour', 'America/New_York');
    expect(hs).toHaveLength(25);
    expect(hs.every((p) => hours(p) === 1)).toBe(true);
    expect(hs.slice(1, 4)).toEqual([
      { key: '2026-11-01T01', start: '2026-11-01T01:00:00-04:00', end: '2026-11-01T01:00:00-05:00' },
      { key: '2026-11-01T01+1', start: '2026-11-01T01:00:00-05:00', end: '2026-11-01T02:00:00-05:00' },
      { key: '2026-11-01T02', start: '2026-11-01T02:00:00-05:00', end: '2026-11-01T03:00:00-05:00' },
    ]);
  });

  it('a range ending at the repeated hour stops before its first occurrence', () => {
    const hs = partitionRange({ from: '2026-11-01T00', to: '2026-11-01T01' }, 'hour', 'America/New_York');
    expect(keys(hs)).toEqual(['2026-11-01T00']);
    const next = partitionRange({ from: '2026-11-01T01', to: '2026-11-01T02' }, 'hour', 'America/New_York');
    expect(keys(next)).toEqual(['2026-11-01T01', '2026-11-01T01+1']);
  });

  it('Lord Howe shifts by 30 minutes: the hour around each shift is 90 or 30 minutes', () => {
    const back = partitionRange({ from: '2026-04-05T01', to: '2026-04-05T03' }, 'hour', 'Australia/Lord_Howe');
    expect(back).toEqual([
      { key: '2026-04-05T01', start: '2026-04-05T01:00:00+11:00', end: '2026-04-05T02:00:00+10:30' },
      { key: '2026-04-05T02', start: '2026-04-05T02:00:00+10:30', end: '2026-04-05T03:00:00+10:30' },
    ]);
    expect(hours(back[0] as Partition)).toBe(1.5);
    const forward = partitionRange({ from: '2026-10-04T01', to: '2026-10-04T03' }, 'hour', 'Australia/Lord_Howe');
    expect(forward).toEqual([
      { key: '2026-10-04T01', start: '2026-10-04T01:00:00+10:30', end: '2026-10-04T02:30:00+11:00' },
      { key: '2026-10-04T02', start: '2026-10-04T02:30:00+11:00', end: '2026-10-04T03:00:00+11:00' },
    ]);
    expect(forward.map(hours)).toEqual([1, 0.5]);
  });

  it('a local midnight that does not exist starts the day at the first instant after it', () => {
    // Sao Paulo sprang forward at midnight until 2018: 2018-11-04 began at 01:00.
    expect(partitionRange({ from: '2018-11-04', to: '2018-11-05' }, 'day', 'America/Sao_Paulo')).toEqual([
      { key: '2018-11-04', start: '2018-11-04T01:00:00-02:00', end: '2018-11-05T00:00:00-02:00' },
    ]);
    // Beirut springs forward at midnight.
    expect(partitionRange({ from: '2026-03-29', to: '2026-03-30' }, 'day', 'Asia/Beirut')).toEqual([
      { key: '2026-03-29', start: '2026-03-29T01:00:00+03:00', end: '2026-03-30T00:00:00+03:00' },
    ]);
  });

  it('a day that was skipped entirely leaves no partition (Samoa, 2011-12-30)', () => {
    const ps = partitionRange({ from: '2011-12-29', to: '2012-01-01' }, 'day', 'Pacific/Apia');
    expect(keys(ps)).toEqual(['2011-12-29', '2011-12-31']);
    expect(rangeDays(ps)).toBe(2);
  });

  it('a two-hour fall back (Antarctica/Troll) keys each repeated hour once, whatever the range', () => {
    const all = partitionRange({ from: '2026-10-25T00', to: '2026-10-25T04' }, 'hour', 'Antarctica/Troll');
    expect(keys(all)).toEqual(['2026-10-25T00', '2026-10-25T01', '2026-10-25T02', '2026-10-25T01+1', '2026-10-25T02+1', '2026-10-25T03']);
    expect(all.every((p) => hours(p) === 1)).toBe(true);
    const tail = partitionRange({ from: '2026-10-25T02', to: '2026-10-25T04' }, 'hour', 'Antarctica/Troll');
    expect(tail).toEqual(all.slice(2));
  });
});

describe('partitionRange: refused input', () => {
  const cases: { from: string; to: string; unit: Unit; zone?: string; message: string; field: string }[] = [
    {
      from: 'last 3 months',
      to: '2026-05-01',
      unit: 'day',
      field: 'range.from',
      message: '--from "last 3 months" is not a date: use YYYY-MM-DD, YYYY-MM (month) or YYYY-MM-DDTHH (hour)',
    },
    {
      from: '2026-05-01',
      to: '',
      unit: 'day',
      field: 'range.to',
      message: '--to "" is not a date: use YYYY-MM-DD, YYYY-MM (month) or YYYY-MM-DDTHH (hour)',
    },
    {
      from: '2026-05-01T00:00:00Z',
      to: '2026-05-02',
      unit: 'day',
      field: 'range.from',
      message: '--from "2026-05-01T00:00:00Z" is not a date: use YYYY-MM-DD, YYYY-MM (month) or YYYY-MM-DDTHH (hour)',
    },
    {
      from: '2026-02-30',
      to: '2026-03-02',
      unit: 'day',
      field: 'range.from',
      message: '--from 2026-02-30 is not a real date: February 2026 has 28 days',
    },
    { from: '2026-05-01', to: '2026-13-01', unit: 'day', field: 'range.to', message: '--to 2026-13-01 is not a real date' },
    { from: '2026-05-01T24', to: '2026-05-02', unit: 'hour', field: 'range.from', message: '--from 2026-05-01T24 is not a real date' },
    {
      from: '2026-07-01',
      to: '2026-05-01',
      unit: 'day',
      field: 'range.to',
      message: '--from 2026-07-01 is not before --to 2026-05-01: the range is half-open, from <= t < to',
    },
    {
      from: '2026-05-01',
      to: '2026-05-01',
      unit: 'day',
      field: 'range.to',
      message: '--from 2026-05-01 is not before --to 2026-05-01: the range is half-open, from <= t < to',
    },
    {
      from: '2026-05-01T13',
      to: '2026-05-03',
      unit: 'day',
      field: 'range.from',
      message: '--from 2026-05-01T13 is not on a day boundary: daily partitions start at local midnight',
    },
    {
      from: '2026-05-15',
      to: '2026-07',
      unit: 'month',
      field: 'range.from',
      message: '--from 2026-05-15 is not on a month boundary: monthly partitions start on the 1st at local midnight',
    },
    {
      from: '2026-05-01T13:30',
      to: '2026-05-02',
      unit: 'hour',
      field: 'range.from',
      message: '--from 2026-05-01T13:30 is not on an hour boundary: hourly partitions start on the hour',
    },
    {
      from: '2010-01-01',
      to: '2030-01-01',
      unit: 'hour',
      field: 'range',
      message: `range 2010-01-01 to 2030-01-01 has 175320 hourly partitions, over the limit of ${MAX_PARTITIONS}: split it into smaller plans`,
    },
    {
      from: '2026-03-08T02',
      to: '2026-03-08T03',
      unit: 'hour',
      zone: 'America/New_York',
      field: 'range.from',
      message:
        '--from 2026-03-08T02 to --to 2026-03-08T03 is empty in America/New_York: that local time does not exist (the clocks skip it)',
    },
    {
      from: '2026-05-01',
      to: '2026-05-02',
      unit: 'day',
      zone: 'Mars/Olympus',
      field: 'timezone',
      message: 'time zone "Mars/Olympus" is not a known IANA zone: use a name like UTC, Asia/Seoul or America/New_York',
    },
  ];
  it.each(cases)('$from .. $to by $unit', (c) => {
    let caught: unknown;
    try {
      partitionRange({ from: c.from, to: c.to }, c.unit, c.zone ?? 'UTC');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InputError);
    expect((caught as InputError).message).toBe(c.message);
    expect((caught as InputError).details.field).toBe(c.field);
  });

  it('names plan fields when asked to', () => {
    expect(() => partitionRange({ from: '2026-07-01', to: '2026-05-01' }, 'day', 'UTC', { from: 'range.from', to: 'range.to' })).toThrow(
      'range.from 2026-07-01 is not before range.to 2026-05-01',
    );
  });

  it('accepts exactly the limit', () => {
    expect(partitionRange({ from: '2010-01-01T00', to: '2021-05-29T16' }, 'hour', 'UTC')).toHaveLength(MAX_PARTITIONS);
  });
});

describe('describeRange and rangeDays', () => {
  const days = partitionRange({ from: '2026-05-01', to: '2026-07-01' }, 'day', 'UTC');
  const cases: { name: string; ps: Partition[]; unit: Unit; text: string; days: number }[] = [
    { name: 'days', ps: days, unit: 'day', text: '61 daily partitions, 2026-05-01 to 2026-06-30 inclusive', days: 61 },
    { name: 'one day', ps: days.slice(0, 1), unit: 'day', text: '1 daily partition, 2026-05-01', days: 1 },
    { name: 'nothing', ps: [], unit: 'day', text: 'no partitions', days: 0 },
    {
      name: 'hours',
      unit: 'hour',
      text: '72 hourly partitions, 2026-05-01T00 to 2026-05-03T23 inclusive',
      days: 3,
      ps: partitionRange({ from: '2026-05-01', to: '2026-05-04' }, 'hour', 'Asia/Seoul'),
    },
    {
      name: 'months',
      unit: 'month',
      text: '3 monthly partitions, 2026-01 to 2026-03 inclusive',
      days: 90,
      ps: partitionRange({ from: '2026-01', to: '2026-04' }, 'month', 'UTC'),
    },
  ];
  it.each(cases)('$name', (c) => {
    expect(describeRange(c.ps, c.unit)).toBe(c.text);
    expect(rangeDays(c.ps)).toBe(c.days);
  });

  it('reads offsets, including Z and historical second offsets', () => {
    expect(instantOf('2026-05-01T00:00:00+09:00')).toBe(Date.UTC(2026, 3, 30, 15));
    expect(instantOf('2026-05-01T00:00:00Z')).toBe(Date.UTC(2026, 4, 1));
    expect(instantOf('1900-01-01T00:00:00+05:21:10')).toBe(Date.UTC(1899, 11, 31, 18, 38, 50));
    expect(() => instantOf('2026-05-01')).toThrow('not a timestamp with an offset: "2026-05-01"');
  });
});

describe('partitionRange: properties over random ranges', () => {
  // Deterministic pseudo-random numbers (mulberry32), so a failure can be replayed.
  function random(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const zones = [
    'UTC',
    'Asia/Seoul',
    'America/New_York',
    'Australia/Lord_Howe',
    'Europe/London',
    'Europe/Dublin',
    'America/Sao_Paulo',
    'Asia/Kolkata',
    'Asia/Kathmandu',
    'Pacific/Chatham',
    'Antarctica/Troll',
    'Pacific/Apia',
    'Asia/Beirut',
    'America/Havana',
    'Africa/Casablanca',
    'America/St_Johns',
  ];
  const pad = (n: number) => String(n).padStart(2, '0');
  const wallText = (ms: number, unit: Unit) => {
    const d = new Date(ms);
    const day = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
    return unit === 'month' ? day.slice(0, 7) : unit === 'day' ? day : `${day}T${pad(d.getUTCHours())}`;
  };
  // The local wall clock at an instant, straight from Intl: the oracle the partitions are checked against.
  const formats = new Map(
    zones.map((zone) => [
      zone,
      new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      }),
    ]),
  );
  const localWall = (t: number, zone: string) => {
    const parts = (formats.get(zone) as Intl.DateTimeFormat).formatToParts(t);
    const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
    return `${get('year')}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}:${get('second')}`;
  };
  const asWall = (text: string) =>
    `${text.length === 7 ? `${text}-01` : text.slice(0, 10)}T${text.length === 13 ? text.slice(11) : '00'}:00:00`;

  it('partitions are contiguous, cover exactly [from, to), agree with Intl, and keep their keys in any larger range', () => {
    const next = random(20260501);
    for (let run = 0; run < 300; run++) {
      const zone = zones[Math.floor(next() * zones.length)] as string;
      const unit = (['hour', 'day', 'month'] as const)[Math.floor(next() * 3)] as Unit;
      const base = Date.UTC(
        2005 + Math.floor(next() * 25),
        Math.floor(next() * 12),
        unit === 'month' ? 1 : 1 + Math.floor(next() * 28),
        unit === 'hour' ? Math.floor(next() * 24) : 0,
      );
      const length = 1 + Math.floor(next() * (unit === 'hour' ? 200 : unit === 'day' ? 60 : 14));
      const end =
        unit === 'month'
          ? Date.UTC(new Date(base).getUTCFullYear(), new Date(base).getUTCMonth() + length, 1)
          : base + length * (unit === 'hour' ? 3_600_000 : 86_400_000);
      const range = { from: wallText(base, unit), to: wallText(end, unit) };
      const context = `${zone} ${unit} ${range.from}..${range.to}`;

      let ps: Partition[];
      try {
        ps = partitionRange(range, unit, zone);
      } catch (error) {
        // Only a range lying wholly in skipped local time may be empty.
        expect((error as Error).message, context).toContain('that local time does not exist');
        continue;
      }
      const first = ps[0] as Partition;
      const last = ps[ps.length - 1] as Partition;
      // from and to are the first instants at which the local clock reaches them
      const fromWall = asWall(range.from);
      const toWall = asWall(range.to);
      expect(localWall(instantOf(first.start), zone) >= fromWall, context).toBe(true);
      expect(localWall(instantOf(first.start) - 1000, zone) < fromWall, context).toBe(true);
      expect(localWall(instantOf(last.end), zone) >= toWall, context).toBe(true);
      expect(localWall(instantOf(last.end) - 1000, zone) < toWall, context).toBe(true);

      expect(new Set(keys(ps)).size, context).toBe(ps.length);
      ps.forEach((p, i) => {
        expect(instantOf(p.start) < instantOf(p.end), `${context} ${p.key}`).toBe(true);
        expect(localWall(instantOf(p.start), zone), `${context} ${p.key}`).toBe(p.start.slice(0, 19));
        const following = ps[i + 1];
        if (following) expect(p.end, context).toBe(following.start);
      });

      const wider = partitionRange(
        { from: wallText(base - 3 * 86_400_000, unit), to: wallText(end + 3 * 86_400_000 + 86_400_000 * 31, unit) },
        unit,
        zone,
      );
      const byStart = new Map(wider.map((p) => [p.start, p]));
      for (const p of ps) expect(byStart.get(p.start), `${context} ${p.key}`).toEqual(p);
    }
  }, 60_000); // 300 random ranges with Intl on every hour: seconds on a busy 2-core machine, not milliseconds
});
