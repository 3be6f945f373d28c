/**
 * The Close step's offer (source article 003, step 7): once this target is fixed, the jobs that
 * read it are stale. One pre-filled plan per downstream job over the same range (in its own
 * unit), in the order they must run; creating one opens its own runbook.
 */
import { act } from '../api.ts';
import { useCall } from '../hooks/useCall.ts';
import { useApp } from '../store/index.ts';

export function DownstreamPlans({ runId }: { runId: string }) {
  const { data } = useCall('run:downstreamPlans', { runId }, 'Read the downstream jobs', runId);
  const go = useApp((s) => s.go);
  if (!data) return null;
  if (data.length === 0) return <p className="muted">No job of this workspace reads the target: nothing downstream to rerun.</p>;
  const create = async (plan: (typeof data)[number]['plan']) => {
    const created = await act('plans:create', { plan }, `Create the plan for ${plan.job}`);
    if (created) go({ name: 'runbook', runId: created.runId, step: null });
  };
  return (
    <section className="downstream-plans" aria-label="Downstream jobs to rerun" data-testid="downstream-plans">
      <h3>Downstream jobs to rerun, in this order</h3>
      <table>
        <thead>
          <tr>
            <th>#</th>
            <th>Job</th>
            <th>Range</th>
            <th>Why</th>
            <th>After</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {data.map((d, i) => (
            <tr key={d.job}>
              <td>{i + 1}</td>
              <td className="mono">{d.job}</td>
              <td className="mono">
                {d.plan.range.from} → {d.plan.range.to} ({d.unit})
              </td>
              <td>{d.reason}</td>
              <td>{d.after.length > 0 ? d.after.join(', ') : '–'}</td>
              <td>
                <button type="button" onClick={() => void create(d.plan)}>
                  Create this plan
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
