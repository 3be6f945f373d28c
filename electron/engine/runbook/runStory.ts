/**
 * A past run on one screen (History): the same story, change, comments and downstream its
 * incident note prints (engine/evidence/note/), the dry run per partition for the charts, and
 * each partition's evidence. Read-only: built from what the store holds — or, for a run imported
 * for review, from the bundle it came with — without exporting anything.
 */
import type { PartitionEvidenceView, RunStoryView } from '../../../shared/contractTypes.ts';
import type { KeyChange } from '../../../shared/keyChange.ts';
import { BUNDLE_FORMAT, type NoteBundle } from '../evidence/bundle.ts';
import { collectRun } from '../evidence/collect.ts';
import { importedBundle } from '../evidence/exportNote.ts';
import { str } from '../evidence/note/blocks.ts';
import { changeSection, dryRunChartRows } from '../evidence/note/change.ts';
import { commentsSection } from '../evidence/note/comments.ts';
import { downstreamSection } from '../evidence/note/downstream.ts';
import { noteFacts } from '../evidence/note/facts.ts';
import { storySection } from '../evidence/note/story.ts';
import { evidenceRepos } from '../evidence/repos.ts';
import { registryTrust } from '../evidence/trust.ts';
import { verifyBundle } from '../evidence/verifyBundle.ts';
import type { Store } from '../store/index.ts';

type Obj = Record<string, unknown>;

export function runStory(store: Store, runId: string, actor: string): RunStoryView {
  const bundle: NoteBundle = importedBundle(store, runId) ?? {
    format: BUNDLE_FORMAT,
    runId,
    exportedAt: new Date().toISOString(),
    exportedBy: actor,
    ...collectRun(store, runId),
    checkpoints: [],
    manifest: { sections: {} },
  };
  // Only the sign-offs' signatures are read from it (who signed, and does it verify).
  const verification = verifyBundle(bundle, registryTrust(evidenceRepos(store).identities.list(), store.file));
  const f = noteFacts(bundle);
  const byKey = (list: KeyChange[]) => new Map(list.map((k) => [k.partition, k]));
  const [predicted, actual] = [byKey(f.predicted), byKey(f.actual)];
  const reconciled = new Map(
    ((f.reconciliation?.body.partitions as Obj[] | undefined) ?? []).map((r) => [str((r.partition as Obj | undefined)?.key), r]),
  );
  const partitions: PartitionEvidenceView[] = (bundle.partitions as Obj[]).map((p) => {
    const key = str(p.key);
    const r = reconciled.get(key);
    return {
      key,
      predicted: predicted.get(key) ?? null,
      actual: actual.get(key) ?? null,
      reconciliation: r
        ? {
            ok: r.ok === true,
            problems: (r.problems as string[] | undefined) ?? [],
            targetCount: typeof r.targetCount === 'number' ? r.targetCount : null,
            markedRows: typeof r.markedRows === 'number' ? r.markedRows : null,
          }
        : null,
    };
  });
  const chartRows = dryRunChartRows(f);
  return {
    sections: [
      storySection(bundle, f, verification),
      changeSection(f, { charts: false }),
      commentsSection(bundle, f, verification),
      downstreamSection(f),
    ],
    chartRows,
    partitions,
  };
}
