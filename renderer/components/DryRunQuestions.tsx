/**
 * The dry run's questions (shared/partitionFlags.ts) as the Impact step, the sign-off screen and
 * the plan's reader see them: one line per question that was raised, with its partitions, and
 * the run's estimated duration against the no-run window. Clean answers are said too.
 */
import type { DryRunView } from '../../shared/contractTypes.ts';
import { humanDuration } from '../../shared/runEstimate.ts';
import { when } from '../lib/format.ts';
import { Badge } from './StatusBadge.tsx';

const QUESTIONS = [
  ['abnormal-size', 'Is a partition abnormally large or small?'],
  ['source-gone', 'Is the source still there?'],
  ['retention', 'Is anything past its personal-data retention?'],
  ['closed-partition', 'May these partitions be overwritten?'],
  ['peak-overlap', 'Does the run end before the no-run window?'],
  ['same-code', 'Is the code different from the one that wrote the bad data?'],
] as const;

export function DryRunQuestions({ dryRun }: { dryRun: DryRunView }) {
  const raised = new Set(dryRun.redFlags.map((f) => f.code));
  const e = dryRun.estimate;
  return (
    <section className="questions" aria-label="The dry run's questions" data-testid="dry-run-questions">
      <h3>The dry run&apos;s questions</h3>
      <ul className="flags">
        {dryRun.redFlags
          .filter((f) => QUESTIONS.some(([code]) => code === f.code))
          .map((f) => (
            <li key={`${f.code}-${f.severity}`} className={`flag flag-${f.severity}`} data-testid="question-flag">
              <Badge tone={f.severity === 'block' ? 'danger' : 'warn'}>{f.severity === 'block' ? 'blocks' : 'warning'}</Badge>{' '}
              <code>{f.code}</code> {f.message}
            </li>
          ))}
        {QUESTIONS.filter(([code]) => !raised.has(code)).map(([code, question]) => (
          <li key={code} className="flag flag-clear">
            <Badge tone="ok">clear</Badge> {question}
          </li>
        ))}
      </ul>
      {e && (
        <p data-testid="dry-run-eta">
          ETA: about <strong>{humanDuration(e.ms)}</strong> for {e.partitions} partition(s) if started now (measured reads × 3, {e.sleepMs}{' '}
          ms pause, {e.concurrency} at a time)
          {e.window
            ? e.entersWindowAt
              ? `; it would reach the no-run window ${e.window.from}–${e.window.to} at ${when(e.entersWindowAt)}.`
              : `; it ends before the no-run window ${e.window.from}–${e.window.to}.`
            : '; the plan sets no no-run window.'}
        </p>
      )}
    </section>
  );
}
