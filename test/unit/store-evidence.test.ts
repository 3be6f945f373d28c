import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, StoreError, type Store } from '../../electron/engine/store/index.ts';

let nowMs = 0;
const clock = () => new Date(nowMs);
const at = (iso: string) => {
  nowMs = Date.parse(iso);
};
let store: Store;

beforeEach(() => {
  at('2026-11-30T12:00:00.000Z');
  store = openStore(':memory:', { clock });
  store.plans.save({ planHash: 'p1', requestId: 'REQ-1', jobName: 'daily_revenue', plan: {} });
  store.runs.create({
    runId: 'r1',
    jobName: 'daily_revenue',
    planHash: 'p1',
    jobHash: 'j1',
    kind: 'dry-run',
    actor: 'ana',
    partitions: [],
  });
});
afterEach(() => store.close());

describe('evidence', () => {
  it('stores the body as sorted-key JSON and hashes exactly the stored text', () => {
    const record = store.evidence.add({
      runId: 'r1',
      planHash: 'p1',
      kind: 'row-count-comparison',
      body: { target: 40, source: 41, nested: { z: 1, a: 2 } },
      actor: 'ana',
    });
    const text = '{"nested":{"a":2,"z":1},"source":41,"target":40}';
    expect(record).toEqual({
      id: 1,
      runId: 'r1',
      planHash: 'p1',
      kind: 'row-count-comparison',
      createdAt: '2026-11-30T12:00:00.000Z',
      body: { nested: { a: 2, z: 1 }, source: 41, target: 40 },
      bodySha256: createHash('sha256').update(text).digest('hex'),
    });
    expect(store.db.prepare('SELECT body_json FROM evidence').pluck().get()).toBe(text);
    expect(store.audit.list({ runId: 'r1' }).at(-1)).toMatchObject({
      entity: 'evidence',
      entityId: '1',
      event: 'evidence.added',
      actor: 'ana',
      detail: { kind: 'row-count-comparison', planHash: 'p1', bodySha256: record.bodySha256 },
    });
  });

  it('lists by run, plan and kind, oldest first, and finds the latest of a kind', () => {
    const add = (runId: string | null, planHash: string, kind: string, n: number) => {
      at(`2026-11-30T12:00:0${n}.000Z`);
      store.evidence.add({ runId, planHash, kind, body: { n } });
    };
    add('r1', 'p1', 'dry-run', 1);
    add(null, 'p1', 'source-health', 2);
    add('r1', 'p1', 'dry-run', 3);
    add(null, 'p2', 'dry-run', 4);
    const bodies = (query: Parameters<Store['evidence']['list']>[0]) => store.evidence.list(query).map((e) => e.body);
    expect(bodies({})).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    expect(bodies({ runId: 'r1' })).toEqual([{ n: 1 }, { n: 3 }]);
    expect(bodies({ planHash: 'p1', kind: 'source-health' })).toEqual([{ n: 2 }]);
    expect(bodies({ kind: 'dry-run' })).toEqual([{ n: 1 }, { n: 3 }, { n: 4 }]);
    expect(store.evidence.latest({ planHash: 'p1', kind: 'dry-run' })).toMatchObject({
      body: { n: 3 },
      createdAt: '2026-11-30T12:00:03.000Z',
    });
    expect(store.evidence.latest({ planHash: 'p3', kind: 'dry-run' })).toBeUndefined();
  });

  it('refuses a body that is not JSON', () => {
    expect(() => store.evidence.add({ kind: 'x', body: undefined })).toThrow(
      new StoreError('evidence x cannot be stored as JSON (got undefined)', 'invalid'),
    );
    expect(store.evidence.list()).toEqual([]);
  });

  it('refuses evidence for an unknown run', () => {
    expect(() => store.evidence.add({ runId: 'ghost', kind: 'x', body: {} })).toThrow(
      new StoreError(
        'a write to :memory: broke a rule of its schema (SQLITE_CONSTRAINT_FOREIGNKEY: FOREIGN KEY constraint failed)',
        'constraint',
        ':memory:',
      ),
    );
  });
});

describe('audit', () => {
  it('appends and lists by seq, by run, after a seq, with a limit', () => {
    const appended = store.audit.append({
      runId: 'r1',
      entity: 'signoff',
      entityId: 'REQ-1',
      event: 'signoff.given',
      actor: 'lead',
      detail: { note: 'ok' },
    });
    expect(appended).toEqual({
      seq: 3,
      at: '2026-11-30T12:00:00.000Z',
      runId: 'r1',
      entity: 'signoff',
      entityId: 'REQ-1',
      event: 'signoff.given',
      fromStatus: null,
      toStatus: null,
      actor: 'lead',
      detail: { note: 'ok' },
    });
    store.audit.append({ entity: 'app', entityId: 'settings', event: 'settings.changed', actor: 'ana' });
    const seqs = (query?: Parameters<Store['audit']['list']>[0]) => store.audit.list(query).map((e) => `${e.seq} ${e.event}`);
    expect(seqs()).toEqual(['1 plan.saved', '2 run.created', '3 signoff.given', '4 settings.changed']);
    expect(seqs({ runId: 'r1' })).toEqual(['2 run.created', '3 signoff.given']);
    expect(seqs({ afterSeq: 2 })).toEqual(['3 signoff.given', '4 settings.changed']);
    expect(seqs({ limit: 2 })).toEqual(['1 plan.saved', '2 run.created']);
    expect(seqs({ runId: 'r1', afterSeq: 2, limit: 1 })).toEqual(['3 signoff.given']);
  });
});
