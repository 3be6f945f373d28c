/**
 * Exports a run's bundle. In one transaction: collect, build the manifest, write the
 * note.exported entry carrying the manifest's hash, and (when the operator's key is unlocked)
 * sign a checkpoint of that entry. A run imported from an archive exports the bundle it came
 * with, untouched: its chain is the original machine's, not this one's.
 */
import { BUNDLE_FORMAT, type NoteBundle } from './bundle.ts';
import type { Checkpoint } from './checkpoints.ts';
import { collectRun, seqRanges } from './collect.ts';
import { buildManifest, manifestHash } from './manifest.ts';
import { evidenceRepos } from './repos.ts';
import type { Store } from '../store/index.ts';
import type { UnlockedIdentity } from './vault.ts';

export type NoteFormat = 'md' | 'html' | 'json';

export interface ExportOptions {
  format: NoteFormat | 'archive';
  actor: string;
  signer?: UnlockedIdentity;
}

export function importedBundle(store: Store, runId: string): NoteBundle | undefined {
  const text = store.db.prepare<[string], string>('SELECT archive_json FROM imported_archives WHERE run_id = ?').pluck().get(runId);
  return text === undefined ? undefined : (JSON.parse(text) as { bundle: NoteBundle }).bundle;
}

export function exportBundle(store: Store, runId: string, options: ExportOptions): NoteBundle {
  return store.transaction(() => {
    const imported = importedBundle(store, runId);
    if (imported) {
      store.audit.append({
        runId,
        entity: 'run',
        entityId: runId,
        event: 'note.exported',
        actor: options.actor,
        detail: { format: options.format, imported: true, manifestSha256: manifestHash(imported.manifest) },
      });
      return imported;
    }
    const { checkpoints, identities } = evidenceRepos(store);
    const sections = collectRun(store, runId);
    const first = sections.audit[0];
    const kept = new Set(sections.audit.map((e) => e.seq));
    // Checkpoints the segment records, or that cover one of its entries; and their signers' keys.
    const recorded = new Set(sections.audit.filter((e) => e.event === 'audit.checkpoint').map((e) => e.entityId));
    const covering = (c: Checkpoint) => recorded.has(String(c.id)) || kept.has(c.seq);
    const earlier = first ? checkpoints.between(first.seq, Number.MAX_SAFE_INTEGER).filter(covering) : [];
    const signers = new Set([
      ...sections.identities.map((i) => i.name),
      ...earlier.map((c) => c.signer),
      ...(options.signer ? [options.signer.identity.name] : []),
    ]);
    sections.identities = identities
      .list()
      .filter((i) => signers.has(i.name))
      .map(({ name, role, publicKeyPem, fingerprint, registeredAt }) => ({ name, role, publicKeyPem, fingerprint, registeredAt }));
    const manifest = buildManifest(sections);
    const entry = store.audit.append({
      runId,
      entity: 'run',
      entityId: runId,
      event: 'note.exported',
      actor: options.actor,
      // The segment's place in the chain: the entries it holds (every other seq up to this one
      // belongs to other runs and is left out on purpose) and its anchor, the hash it starts from.
      detail: {
        format: options.format,
        manifestSha256: manifestHash(manifest),
        auditFrom: first?.seq ?? null,
        auditTo: sections.audit.at(-1)?.seq ?? null,
        auditRanges: seqRanges(sections.audit.map((e) => e.seq)),
        anchor: first ? { seq: first.seq - 1, hash: first.prevHash } : null,
      },
    });
    if (options.signer) checkpoints.sign(options.signer, options.format === 'archive' ? 'archive-exported' : 'note-exported', runId);
    const audit = [...sections.audit, ...store.audit.chain({ fromSeq: entry.seq, toSeq: entry.seq })];
    kept.add(entry.seq);
    return {
      format: BUNDLE_FORMAT,
      runId,
      // The entry's own time and actor: the bundle's header must agree with its chain.
      exportedAt: entry.at,
      exportedBy: entry.actor,
      ...sections,
      audit,
      checkpoints: checkpoints.between(audit[0]?.seq ?? entry.seq, entry.seq).filter(covering),
      manifest,
    };
  });
}
