/**
 * A run's bundle carries its own segment of the audit chain and nothing of other runs: the
 * entries it holds are declared in its note.exported entry (with the segment's anchor), the
 * head is signed, and verify tells a gap left on purpose from an entry removed — in a ledger of
 * one run or of fifty, where the bundle stays the same size.
 */
import { describe, expect, it } from 'vitest';
import type { NoteBundle } from '../../electron/engine/evidence/bundle.ts';
import type { ChainedEntry } from '../../electron/engine/evidence/chain.ts';
import { exportBundle } from '../../electron/engine/evidence/exportNote.ts';
import { fingerprint, generateKeys, publicKeyPem } from '../../electron/engine/evidence/keys.ts';
import { evidenceRepos } from '../../electron/engine/evidence/repos.ts';
import { signRequest, type SignoffRequest } from '../../electron/engine/evidence/signoff.ts';
import { registryTrust } from '../../electron/engine/evidence/trust.ts';
import type { UnlockedIdentity } from '../../electron/engine/evidence/vault.ts';
import { verifyBundle } from '../../electron/engine/evidence/verifyBundle.ts';
import { openStore, type Store } from '../../electron/engine/store/index.ts';

function key(name: string, role: 'lead' | 'operator'): UnlockedIdentity {
  const { privateKey } = generateKeys();
  const pem = publicKeyPem(privateKey);
  return { identity: { name, role, publicKeyPem: pem, fingerprint: fingerprint(pem) }, privateKey };
}
const alice = key('alice', 'lead');
const bob = key('bob', 'operator');
const hashOf = (i: number, c: string) => `${c}${String(i).padStart(63, '0')}`;

/** Run `bf-<i>`'s plan, dry run and sign-off, then its partitions step by step (interleaved with others by the caller). */
function steps(s: Store, i: number): (() => void)[] {
  const { signoffs } = evidenceRepos(s);
  const runId = `bf-${i}`;
  const planHash = hashOf(i, 'a');
  const keys = ['2026-05-01', '2026-05-02', '2026-05-03'];
  return [
    () => {
      s.plans.save({ planHash, requestId: runId, jobName: 'mart', plan: { request_id: runId, reason: `run ${i}` } });
      const dry = s.evidence.add({ planHash, kind: 'dry-run', body: { jobHash: hashOf(i, 'b'), partitions: [] } });
      const request = { requestId: runId, planHash, impactHash: dry.bodySha256, jobHash: hashOf(i, 'b') } as SignoffRequest;
      signoffs.record(signRequest(request, alice, `ok ${i}`, new Date()), 'bob');
      s.runs.create({
        runId,
        jobName: 'mart',
        planHash,
        jobHash: hashOf(i, 'b'),
        kind: 'execute',
        tier: 'manual',
        requestedBy: 'carol',
        executedBy: 'bob',
        actor: 'bob',
        partitions: keys.map((key) => ({ key })),
      });
      s.runs.setStatus(runId, 'running', { actor: 'bob', event: 'run.started' });
    },
    ...keys.map((k) => () => {
      s.partitions.transition(runId, k, 'running', {}, 'bob');
      s.partitions.transition(runId, k, 'published', { rowsWritten: 10, checksum: `md5:${k}` }, 'bob');
    }),
    () => {
      s.evidence.add({ runId, planHash, kind: 'reconciliation', body: { ok: true, partitions: [] } });
      s.runs.setStatus(runId, 'succeeded', { actor: 'bob' });
    },
  ];
}

/** A ledger of `runs` runs whose steps interleave; run bf-1 among them. */
function ledger(runs: number): Store {
  const s = openStore(':memory:');
  const { identities } = evidenceRepos(s);
  for (const k of [alice, bob])
    identities.register({ name: k.identity.name, role: k.identity.role, publicKeyPem: k.identity.publicKeyPem, actor: 'admin' });
  const all = Array.from({ length: runs }, (_, i) => steps(s, i + 1));
  for (let step = 0; step < 5; step++) for (const run of all) run[step]?.();
  return s;
}

const trustOf = (s: Store) => registryTrust(evidenceRepos(s).identities.list(), 'the test ledger');
const clone = (b: NoteBundle): NoteBundle => JSON.parse(JSON.stringify(b)) as NoteBundle;

describe("a run's bundle in a ledger of many runs", () => {
  it('holds only its own entries, declares them and its anchor, and verifies INTACT with its head signed', () => {
    const s = ledger(5);
    const bundle = exportBundle(s, 'bf-1', { format: 'json', actor: 'bob', signer: bob });
    const planHash = hashOf(1, 'a');
    for (const e of bundle.audit) {
      const mine = e.runId === 'bf-1' || e.entityId === planHash || e.detail.planHash === planHash;
      expect(mine, `seq ${e.seq} (${e.event}, run ${String(e.runId)})`).toBe(true);
    }
    expect(JSON.stringify(bundle)).not.toMatch(/bf-[2-5]\b|run [2-5]/);
    const head = bundle.audit.at(-1) as ChainedEntry;
    const first = bundle.audit[0] as ChainedEntry;
    expect(head.detail.anchor).toEqual({ seq: first.seq - 1, hash: first.prevHash });
    const ranges = head.detail.auditRanges as [number, number][];
    expect(ranges.length).toBeGreaterThan(1); // other runs' entries sit in between
    expect(ranges.flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => a + i))).toEqual(
      bundle.audit.slice(0, -1).map((e) => e.seq),
    );
    const v = verifyBundle(bundle, trustOf(s));
    expect(v.problems).toEqual([]);
    expect(v.verdict).toBe('intact');
    expect(v.signedHead).toBe(true);
    expect(bundle.identities.map((i) => i.name).sort()).toEqual(['alice', 'bob']);
    s.close();
  });

  it('stays the size of the same bundle in a ledger of one run (1 run vs 50 runs)', () => {
    const sizes = [1, 50].map((n) => {
      const s = ledger(n);
      const text = JSON.stringify(exportBundle(s, 'bf-1', { format: 'json', actor: 'bob', signer: bob }), null, 2);
      s.close();
      return Buffer.byteLength(text);
    });
    console.log(`bundle of bf-1: ${sizes[0]} bytes in a ledger of 1 run, ${sizes[1]} bytes in a ledger of 50 runs`);
    const [one, fifty] = sizes as [number, number];
    expect(Math.abs(fifty - one) / one).toBeLessThan(0.05);
  });

  it('names an entry of the run removed across a gap, and a forged declaration of that gap', () => {
    const s = ledger(3);
    const bundle = exportBundle(s, 'bf-1', { format: 'json', actor: 'bob', signer: bob });
    const trust = trustOf(s);
    // A partition's entry right after another run's entries: removing it leaves a gap that is not declared.
    const i = bundle.audit.findIndex(
      (e, k) => k > 0 && e.seq !== (bundle.audit[k - 1] as ChainedEntry).seq + 1 && e.entity === 'partition',
    );
    expect(i).toBeGreaterThan(0);
    const removed = bundle.audit[i] as ChainedEntry;
    const cut = clone(bundle);
    cut.audit.splice(i, 1);
    const v = verifyBundle(cut, trust);
    expect(v.verdict).toBe('broken');
    expect(v.broken.join('\n')).toContain(`seq ${removed.seq}`);
    expect(v.broken.join('\n')).toMatch(/missing \(deleted\)/);
    // Declaring the removed seq as left out changes the head, whose hash the signed checkpoint covers.
    const forged = clone(cut);
    const head = forged.audit.at(-1) as ChainedEntry;
    head.detail.auditRanges = (head.detail.auditRanges as [number, number][]).flatMap(([a, b]) =>
      removed.seq >= a && removed.seq <= b
        ? (
            [
              [a, removed.seq - 1],
              [removed.seq + 1, b],
            ] as [number, number][]
          ).filter(([x, y]) => x <= y)
        : [[a, b]],
    );
    const w = verifyBundle(forged, trust);
    expect(w.verdict).toBe('broken');
    expect(w.broken.join('\n')).toMatch(/note\.exported.*changed after it was written/);
    s.close();
  });

  it("refuses another run's entry slipped into the segment", () => {
    const s = ledger(3);
    const bundle = exportBundle(s, 'bf-1', { format: 'json', actor: 'bob', signer: bob });
    const other = s.audit.chain().find((e) => e.runId === 'bf-2' && e.seq > (bundle.audit[0] as ChainedEntry).seq) as ChainedEntry;
    const added = clone(bundle);
    added.audit.push(other);
    added.audit.sort((a, b) => a.seq - b.seq);
    const v = verifyBundle(added, trustOf(s));
    expect(v.verdict).toBe('broken');
    expect(v.broken.join('\n')).toContain(`audit entry seq ${other.seq} in audit[] was not in the note when it was exported: it was added`);
    s.close();
  });
});
