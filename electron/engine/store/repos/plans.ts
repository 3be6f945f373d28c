import type Database from 'better-sqlite3';
import { canonicalJson } from '../json.ts';
import { toPlan, type PlanRow } from '../rows.ts';
import type { Clock, Plan } from '../types.ts';
import type { AuditRepo } from './audit.ts';

export interface PlanInput {
  planHash: string;
  requestId: string;
  jobName: string;
  plan: unknown;
  /** Who saved it; audited. Defaults to 'system'. */
  actor?: string;
}

export interface PlansRepo {
  /** Idempotent: a plan hash already stored is left as it is and returned. */
  save(input: PlanInput): Plan;
  get(planHash: string): Plan | undefined;
}

export function createPlansRepo(db: Database.Database, clock: Clock, audit: AuditRepo): PlansRepo {
  const statements = {
    get: db.prepare<[string], PlanRow>('SELECT * FROM plans WHERE plan_hash = ?'),
    insert: db.prepare<Record<string, unknown>>(`
      INSERT INTO plans (plan_hash, request_id, job_name, plan_json, created_at)
      VALUES (@planHash, @requestId, @jobName, @planJson, @now)
      ON CONFLICT (plan_hash) DO NOTHING`),
  };

  const get = (planHash: string): Plan | undefined => {
    const row = statements.get.get(planHash);
    return row === undefined ? undefined : toPlan(row);
  };

  const save = db.transaction((input: PlanInput): Plan => {
    const { changes } = statements.insert.run({
      planHash: input.planHash,
      requestId: input.requestId,
      jobName: input.jobName,
      planJson: canonicalJson(input.plan, `plan ${input.planHash}`),
      now: clock().toISOString(),
    });
    if (changes === 1) {
      audit.append({
        entity: 'plan',
        entityId: input.planHash,
        event: 'plan.saved',
        actor: input.actor ?? 'system',
        detail: { requestId: input.requestId, jobName: input.jobName },
      });
    }
    const saved = get(input.planHash);
    if (saved === undefined) throw new Error(`plan ${input.planHash} vanished while saving`);
    return saved;
  });

  return { save: (input) => save.immediate(input), get };
}
