// Content hashes of plans and jobs: SHA-256 over RFC 8785 canonical JSON. A signed plan is
// identified by its hash, so the hash is taken after zod fills in defaults: a plan that omits
// `throttle` and one that spells out the default throttle are the same plan.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../../shared/canonicalJson.ts';
import { jobSchema, planSchema, type Job, type Plan } from '../../../shared/schemas.ts';

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

export function planHash(plan: Plan): string {
  return sha256Hex(canonicalJson(planSchema.parse(plan)));
}

export function jobHash(job: Job): string {
  return sha256Hex(canonicalJson(jobSchema.parse(job)));
}
