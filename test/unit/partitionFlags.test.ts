/** The dry run's questions as pure rules: a table of cases per question, severities by tier, acceptances. */
import { describe, expect, it } from 'vitest';
import {
  partitionFlags,
  peakOverlapFlag,
  planListProblem,
  summarizePartitionFlags,
  type MeasuredPartition,
  type PartitionQuestions,
} from '../../shared/partitionFlags.ts';
import { partitionRange } from '../../shared/partitions.ts';
import { redFlags } from '../../shared/redFlags.ts';
import { runEstimate } from '../../shared/runEstimate.ts';
import { jobSchema, planSchema, type JobInput, type PlanInput } from '../../shared/schemas.ts';
import type { Tier } from '../../shared/tier.ts';

const job = (extra: Partial<JobInput> = {}) =>
  jobSchema.parse({
    name: 'orders',
    unit: 'day',
    source: { connection: 'w', query: 'select 1' },
    target: { connection: 'w', table: 'mart.t', partition_column: 'd' },
    write_mode: 'overwrite-partition',
    ...extra,
  });
const plan = (extra: Partial<PlanInput> = {}) =>
  planSchema.parse({
    request_id: 'bf-1',
    job: 'orders',
    range: { from: '2026-05-01', to: '2026-05-08' },
    write_mode: 'overwrite-partition',
    ...extra,
  });
const partitions = partitionRange({ from: '2026-05-01', to: '2026-05-08' }, 'day', 'UTC');
const NOW = new Date('2026-12-01T12:00:00Z');

/** Seven days of ~400 rows, the target holding the same, with `change` laid over. */
function measured(change: Record<string, Partial<MeasuredPartition>> = {}): MeasuredPartition[] {
  return partitions.map((p, i) => ({ key: p.key, sourceRows: 400 + i, targetRows: 400 + i, ...change[p.key] }));
}

function ask(over: Partial<PartitionQuestions> = {}, tier: Tier = 'manual') {
  return partitionFlags({ tier, plan: plan(), job: job(), partitions, measured: measured(), now: NOW, ...over });
}

const brief = (flags: ReturnType<typeof ask>) => flags.map((f) => `${f.key} ${f.code} ${f.severity}`);

describe('abnormal size', () => {
  it.each<[string, Record<string, Partial<MeasuredPartition>>, string[]]>([
    ['an ordinary week', {}, []],
    ['one day six times its neighbours', { '2026-05-04': { sourceRows: 2400 } }, ['2026-05-04 abnormal-size block']],
    ['one day a sixth of its neighbours', { '2026-05-04': { sourceRows: 60, targetRows: 60 } }, ['2026-05-04 abnormal-size block']],
    ['twice the neighbours is within the default ratio of 3', { '2026-05-04': { sourceRows: 800, targetRows: 800 } }, []],
    ['four times what the target holds now', { '2026-05-02': { sourceRows: 401, targetRows: 100 } }, ['2026-05-02 abnormal-size block']],
    ['a new partition (target empty) is no size question against the target', { '2026-05-02': { targetRows: 0 } }, []],
  ])('%s', (_, change, expected) => {
    expect(brief(ask({ measured: measured(change) }))).toEqual(expected);
  });

  it('tiny partitions are never abnormal (min_rows), and the thresholds come from the job', () => {
    const small = partitions.map((p, i) => ({ key: p.key, sourceRows: i === 3 ? 8 : 2, targetRows: 2 }));
    expect(ask({ measured: small })).toEqual([]);
    const strict = job({ red_flags: { abnormal_size: { neighbour_ratio: 1.5 } } });
    expect(brief(ask({ job: strict, measured: measured({ '2026-05-04': { sourceRows: 700, targetRows: 700 } }) }))).toEqual([
      '2026-05-04 abnormal-size block',
    ]);
  });

  it('follows the tier, and an acknowledgement makes it a warning that says why', () => {
    const big = measured({ '2026-05-04': { sourceRows: 2400 } });
    expect(brief(ask({ measured: big }, 'semi-auto'))).toEqual(['2026-05-04 abnormal-size warn']);
    const acked = ask({
      measured: big,
      plan: plan({ acknowledge: [{ flag: 'abnormal-size', reason: 'a campaign day', partitions: ['2026-05-04'] }] }),
    });
    expect(acked[0]).toMatchObject({ severity: 'warn', accepted: 'acknowledged in the plan: a campaign day' });
  });
});

describe('source no longer there', () => {
  it('blocks in every tier, names its partitions, and does not also call them (or their neighbours) abnormal', () => {
    const gone = measured({ '2026-05-03': { sourceRows: 0 }, '2026-05-04': { sourceRows: 0 }, '2026-05-05': { sourceRows: 100 } });
    for (const tier of ['auto', 'semi-auto', 'manual'] as const)
      expect(brief(ask({ measured: gone }, tier))).toEqual([
        '2026-05-03 source-gone block',
        '2026-05-04 source-gone block',
        '2026-05-05 source-gone block',
      ]);
    const [flag] = summarizePartitionFlags(ask({ measured: gone }));
    expect(flag).toMatchObject({ code: 'source-gone', severity: 'block', partitions: ['2026-05-03', '2026-05-04', '2026-05-05'] });
  });

  it('is accepted per partition by the plan (then a warning), and an empty target loses nothing', () => {
    const gone = measured({ '2026-05-03': { sourceRows: 0 }, '2026-05-04': { sourceRows: 0 } });
    const flags = ask({ measured: gone, plan: plan({ accept_purged: ['2026-05-03'] }) });
    expect(brief(flags)).toEqual(['2026-05-03 source-gone warn', '2026-05-04 source-gone block']);
    expect(ask({ measured: measured({ '2026-05-03': { sourceRows: 0, targetRows: 0 } }) }).map((f) => f.code)).toEqual(['abnormal-size']);
  });
});

describe('retention, closed partitions, same code', () => {
  it('retention refuses partitions that start before now − days, in every tier', () => {
    const j = job({ retention: { days: 214, reason: 'GDPR' } }); // now − 214 days = 2026-05-01T12:00Z
    expect(brief(ask({ job: j }, 'auto'))).toEqual(['2026-05-01 retention block']);
    expect(redFlags({ plan: plan(), job: j, partitionCount: 7, dryRunOnRecord: true, tier: 'auto', partitions, now: NOW })).toContainEqual(
      expect.objectContaining({ code: 'retention', severity: 'block', partitions: ['2026-05-01'] }),
    );
  });

  it('a closed partition blocks unless the plan lists it', () => {
    const closed = new Map([['2026-05-02', 'invoiced']]);
    expect(brief(ask({ closed }, 'auto'))).toEqual(['2026-05-02 closed-partition block']);
    expect(ask({ closed, plan: plan({ overwrite_closed: ['2026-05-02'] }) })[0]).toMatchObject({
      severity: 'warn',
      detail: 'closed: invoiced',
    });
  });

  it('same code: published by another run with this job version; not by the run itself, not by another version', () => {
    const publishedBy = new Map([
      ['2026-05-01', { runId: 'old', jobHash: 'h1' }],
      ['2026-05-02', { runId: 'bf-1', jobHash: 'h1' }],
      ['2026-05-03', { runId: 'older', jobHash: 'h0' }],
      ['2026-05-04', { runId: 'unknown', jobHash: null }],
    ]);
    expect(brief(ask({ publishedBy, jobHash: 'h1' }, 'semi-auto'))).toEqual(['2026-05-01 same-code warn']);
  });
});

describe('peak overlap', () => {
  const estimate = (sleepMs: number, from: string, to: string) =>
    runEstimate({
      partitionReadMs: [10, 10, 10, 10],
      sleepMs,
      concurrency: 1,
      window: { from, to },
      timeZone: 'UTC',
      start: new Date('2026-12-01T06:00:00Z'),
    });

  it.each<[string, number, string, string, boolean]>([
    ['reaches the window', 3_600_000, '08:00', '09:00', true],
    ['done before it opens', 0, '08:00', '09:00', false],
    ['starts inside it', 0, '05:30', '06:30', true],
    ['a window across midnight', 3_600_000, '23:00', '07:00', true],
  ])('%s', (_, sleep, from, to, raised) => {
    const flag = peakOverlapFlag(estimate(sleep, from, to), plan(), 'manual', 'UTC');
    expect(flag !== null).toBe(raised);
    if (flag) expect(flag).toMatchObject({ code: 'peak-overlap', severity: 'block', field: 'stop.no_run_window' });
  });

  it('four partitions an hour apart take 3 hours; three at concurrency 3 never pause', () => {
    const e = estimate(3_600_000, '20:00', '21:00');
    expect(e.ms).toBe(3 * 3_600_000 + 4 * 30);
    expect(e.entersWindowAt).toBeNull();
    const parallel = runEstimate({
      partitionReadMs: [10, 10, 10],
      sleepMs: 3_600_000,
      concurrency: 3,
      window: undefined,
      timeZone: 'UTC',
      start: new Date(),
    });
    expect(parallel.ms).toBe(30);
  });
});

describe('plan lists', () => {
  it('must name partitions of the range', () => {
    expect(planListProblem(plan({ accept_purged: ['2026-05-02'] }), partitions)).toBeNull();
    expect(planListProblem(plan({ overwrite_closed: ['2026-06-02'] }), partitions)).toEqual({
      field: 'overwrite_closed',
      value: '2026-06-02',
    });
    expect(planListProblem(plan({ acknowledge: [{ flag: 'same-code', reason: 'x', partitions: ['05-02'] }] }), partitions)).toEqual({
      field: 'acknowledge[0].partitions',
      value: '05-02',
    });
  });
});
