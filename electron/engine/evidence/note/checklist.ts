/**
 * The manual checklist of source article 001, step by step, each with the evidence on record:
 * source health → snapshot → impact (dry run) → lead sign-off → execute → row-count comparison.
 */
import type { BundleEvidence, NoteBundle } from '../bundle.ts';
import type { BundleVerification } from '../verifyBundle.ts';

import type { ChecklistStep } from '../../../../shared/noteBlocks.ts';

export type { ChecklistStep, StepState } from '../../../../shared/noteBlocks.ts';

type Obj = Record<string, unknown>;

const cite = (e: BundleEvidence) => `evidence #${e.id} (${e.kind}) at ${e.createdAt}, sha256 ${e.bodySha256.slice(0, 16)}…`;
const body = (e: BundleEvidence): Obj => {
  try {
    return JSON.parse(e.bodyJson) as Obj;
  } catch {
    return {};
  }
};

const KNOWN = /dry-run|reconciliation|sanity|health|quality|snapshot/;

export function checklist(bundle: NoteBundle, verification: BundleVerification): ChecklistStep[] {
  const of = (pattern: RegExp) => bundle.evidence.filter((e) => pattern.test(e.kind));
  const step = (name: string, items: BundleEvidence[], describe: (e: BundleEvidence) => string = cite, failed = false): ChecklistStep => ({
    step: name,
    state: items.length === 0 ? 'missing' : failed ? 'failed' : 'done',
    evidence: items.length === 0 ? ['no evidence on record'] : items.map(describe),
  });
  const run = (bundle.run[0] ?? {}) as Obj;
  const dryRuns = of(/^dry-run$/);
  const recon = of(/^reconciliation$/);
  const lastRecon = recon.at(-1);
  const signoffs = bundle.signoffs.map((s) => {
    const st = s.statement as Obj;
    const verdict = verification.signatures.find((v) => v.what.startsWith('sign-off') && v.at === st.at && v.signer === st.signer);
    return `${String(st.signer)} signed at ${String(st.at)}: “${String(st.comment)}” — signature ${verdict?.valid ? 'verified' : 'NOT verified'} (sign-off #${s.id})`;
  });
  const published = Number(run.partitionsPublished ?? 0);
  const total = Number(run.partitionsTotal ?? 0);
  const other = bundle.evidence.filter((e) => !KNOWN.test(e.kind));
  return [
    step('Source health checked', of(/sanity|health|quality/), (e) => `${cite(e)}: ${body(e).ok === false ? 'FAILED' : 'passed'}`),
    step('Source snapshot taken', of(/snapshot/)),
    step('Impact scope measured (dry run)', dryRuns, (e) => {
      const b = body(e) as { summary?: string; partitions?: { change?: { rows?: number | string } }[] };
      const change = (b.partitions ?? []).reduce((sum, p) => sum + Number(p.change?.rows ?? 0), 0);
      return `${cite(e)}: ${b.summary ?? ''}, row change ${change >= 0 ? '+' : ''}${change}`;
    }),
    {
      step: 'Lead sign-off',
      state: signoffs.length === 0 ? 'missing' : 'done',
      evidence: signoffs.length ? signoffs : ['no sign-off on record'],
    },
    {
      step: 'Executed',
      state:
        total === 0 || run.status === 'planned'
          ? 'missing'
          : Number(run.partitionsFailed ?? 0) > 0 || run.status === 'failed'
            ? 'failed'
            : 'done',
      evidence: [`${published}/${total} partitions published, ${Number(run.rowsWritten ?? 0)} rows, status ${String(run.status)}`],
    },
    step(
      'Row-count comparison captured',
      recon,
      (e) => `${cite(e)}: ${body(e).ok ? 'all partitions agree' : 'DISAGREEMENT'}`,
      lastRecon !== undefined && body(lastRecon).ok !== true,
    ),
    ...(other.length > 0 ? [step('Other evidence', other)] : []),
  ];
}
