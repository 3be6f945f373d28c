import { describe, expect, it } from 'vitest';
import {
  belongsTo,
  dataObjectKey,
  isDataKey,
  manifestKeyOf,
  placeholderValues,
  renderPath,
  rootOf,
  snapshotManifestKey,
  snapshotObjectKey,
} from '../../electron/engine/targets/s3/paths.ts';
import { encodeCopySource } from '../../electron/engine/targets/s3/bucket.ts';

describe('renderPath', () => {
  const cases: { template: string; key: string; unit: 'hour' | 'day' | 'month'; stem: string }[] = [
    { template: 'p-backfill/p-backfill_{date}_{hour}', key: '2026-01-20T19', unit: 'hour', stem: 'p-backfill/p-backfill_2026-01-20_19' },
    { template: 'p-backfill/p-backfill_{date}_{hour}', key: '2026-01-20T01', unit: 'hour', stem: 'p-backfill/p-backfill_2026-01-20_01' },
    { template: 'refined/event/dt={date}/', key: '2026-01-20', unit: 'day', stem: 'refined/event/dt=2026-01-20/' },
    { template: 'm/{partition}/', key: '2026-05', unit: 'month', stem: 'm/2026-05/' },
    { template: 'm/dt={date}/', key: '2026-05', unit: 'month', stem: 'm/dt=2026-05-01/' },
    // the repeated hour when the clocks fall back keeps its suffix: two partitions, two places
    { template: 'e/{date}/{hour}/', key: '2026-11-01T01+1', unit: 'hour', stem: 'e/2026-11-01/01+1/' },
    { template: 'e/{date}/', key: '2026-11-01+1', unit: 'day', stem: 'e/2026-11-01+1/' },
  ];
  it.each(cases)('$template @ $key → $stem', ({ template, key, unit, stem }) => {
    expect(renderPath(template, key, unit)).toBe(stem);
  });

  it('gives every placeholder of a key', () => {
    expect(placeholderValues('2026-01-20T07', 'hour')).toEqual({
      date: '2026-01-20',
      hour: '07',
      partition: '2026-01-20T07',
      yyyy: '2026',
      mm: '01',
      dd: '20',
      hh: '07',
    });
    // the repeated day keeps its suffix on its finest placeholder
    expect(placeholderValues('2026-11-01+1', 'day')).toMatchObject({ yyyy: '2026', mm: '11', dd: '01+1', hh: '' });
    expect(() => placeholderValues('yesterday', 'day')).toThrow('not a partition key: "yesterday"');
  });
});

describe('which keys belong to a partition', () => {
  const flat = 'p-backfill/p-backfill_2026-01-20_01';
  const folder = 'refined/event/dt=2026-01-20/';
  const cases: { stem: string; key: string; belongs: boolean; data: boolean }[] = [
    { stem: flat, key: `${flat}#0.json.gz`, belongs: true, data: true },
    { stem: flat, key: `${flat}#0.0123456789abcdef.json.gz`, belongs: true, data: true },
    { stem: flat, key: `${flat}_complete`, belongs: true, data: false },
    // hour 10 is not hour 1
    { stem: flat, key: 'p-backfill/p-backfill_2026-01-20_10#0.json.gz', belongs: false, data: false },
    { stem: flat, key: 'p-backfill/p-backfill_2026-01-20_1#0.json.gz', belongs: false, data: false },
    { stem: folder, key: `${folder}part-0.abc.json.gz`, belongs: true, data: true },
    { stem: folder, key: `${folder}_complete`, belongs: true, data: false },
    { stem: folder, key: `${folder}hour=01/_complete`, belongs: true, data: false },
    { stem: folder, key: `${folder}`, belongs: true, data: false },
    { stem: folder, key: 'refined/event/dt=2026-01-201/x', belongs: false, data: false },
  ];
  it.each(cases)('$key in $stem: $belongs', ({ stem, key, belongs, data }) => {
    expect([belongsTo(stem, key), isDataKey(stem, key)]).toEqual([belongs, data]);
  });
});

describe('names', () => {
  it('derives object names from the partition and the content', () => {
    const sha = 'f'.repeat(64);
    expect(dataObjectKey('a/a_2026-01-20_19', 0, sha, 'json.gz')).toBe('a/a_2026-01-20_19#0.ffffffffffffffff.json.gz');
    expect(dataObjectKey('refined/dt=2026-01-20/', 3, sha, 'json')).toBe('refined/dt=2026-01-20/part-3.ffffffffffffffff.json');
    expect(manifestKeyOf('a/a_2026-01-20_19')).toBe('a/a_2026-01-20_19_complete');
    expect(manifestKeyOf('refined/dt=2026-01-20/')).toBe('refined/dt=2026-01-20/_complete');
  });

  it('keeps snapshots outside every data prefix', () => {
    expect(snapshotObjectKey('bf-1', 'a/a_2026-01-20_19#0.x.json.gz')).toBe('_snapshots/bf-1/a/a_2026-01-20_19#0.x.json.gz');
    expect(snapshotManifestKey('bf-1', '2026-01-20T19')).toBe('_snapshots/bf-1/_manifests/2026-01-20T19.json');
    expect(rootOf('p-backfill/p-backfill_{date}_{hour}')).toBe('p-backfill/');
    expect(rootOf('{date}/x')).toBe('');
  });

  it('encodes a copy source so both S3 and decodeURI-based servers find the key', () => {
    expect(encodeCopySource('a b/c#0.x+y=z:1.json.gz')).toBe('a%20b/c#0.x%2By=z:1.json.gz');
  });
});
