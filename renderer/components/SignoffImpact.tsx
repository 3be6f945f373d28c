/**
 * On the sign-off screen, what the lead is asked to sign besides the plan: the dry run's answers
 * and the impact graph, exactly as recorded (the sign-off request carries the same, hashed).
 */
import type { DryRunView } from '../../shared/contractTypes.ts';
import { DryRunQuestions } from './DryRunQuestions.tsx';
import { ImpactGraph } from './ImpactGraph.tsx';

export function SignoffImpact({ dryRun }: { dryRun: DryRunView | null | undefined }) {
  if (!dryRun) return <p className="muted">No dry run on record yet: a lead signs the plan together with its measured impact.</p>;
  return (
    <details className="signoff-impact" open data-testid="signoff-impact">
      <summary>
        What the lead signs with the plan: dry run #{dryRun.evidenceId} — {dryRun.summary}
      </summary>
      <DryRunQuestions dryRun={dryRun} />
      {dryRun.impact && <ImpactGraph graph={dryRun.impact} />}
    </details>
  );
}
