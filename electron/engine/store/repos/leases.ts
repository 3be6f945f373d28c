import type Database from 'better-sqlite3';
import { StoreError } from '../errors.ts';
import type { Clock } from '../types.ts';
import type { AuditRepo } from './audit.ts';

/**
 * A run's lease says which process may drive it, so two executors (the app and a CLI, or two
 * windows) never work the same run. Expiry is compared as ISO text, which is safe because every
 * timestamp is written by toISOString (same width, UTC).
 */
export interface RunLeases {
  /** Takes the lease if it is free, expired, or already ours. Atomic. */
  acquireLease(runId: string, owner: string, ttlMs: number): boolean;
  /** Extends our lease; false if someone else holds it now (stop working the run). */
  renewLease(runId: string, owner: string, ttlMs: number): boolean;
  /** Gives the lease up; false if it was not ours. */
  releaseLease(runId: string, owner: string): boolean;
}

interface LeaseRow {
  lease_owner: string | null;
  lease_expires_at: string | null;
}

export function createRunLeases(db: Database.Database, clock: Clock, audit: AuditRepo): RunLeases {
  const statements = {
    get: db.prepare<[string], LeaseRow>('SELECT lease_owner, lease_expires_at FROM runs WHERE run_id = ?'),
    acquire: db.prepare<{ runId: string; owner: string; expires: string; now: string }>(`
      UPDATE runs SET lease_owner = @owner, lease_expires_at = @expires, updated_at = @now
      WHERE run_id = @runId
        AND (lease_owner IS NULL OR lease_owner = @owner OR lease_expires_at IS NULL OR lease_expires_at <= @now)`),
    renew: db.prepare<{ runId: string; owner: string; expires: string; now: string }>(
      'UPDATE runs SET lease_expires_at = @expires, updated_at = @now WHERE run_id = @runId AND lease_owner = @owner',
    ),
    release: db.prepare<{ runId: string; owner: string; now: string }>(
      'UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL, updated_at = @now WHERE run_id = @runId AND lease_owner = @owner',
    ),
  };

  const times = (ttlMs: number) => {
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new StoreError(`lease ttl must be a positive number of ms (got ${ttlMs})`, 'invalid');
    const now = clock();
    return { now: now.toISOString(), expires: new Date(now.getTime() + ttlMs).toISOString() };
  };

  const leaseOf = (runId: string): LeaseRow => {
    const row = statements.get.get(runId);
    if (row === undefined) throw new StoreError(`run ${runId} does not exist`, 'not-found');
    return row;
  };

  const acquire = db.transaction((runId: string, owner: string, ttlMs: number): boolean => {
    const { now, expires } = times(ttlMs);
    const before = leaseOf(runId);
    if (statements.acquire.run({ runId, owner, expires, now }).changes === 0) return false;
    const wasOurs = before.lease_owner === owner && before.lease_expires_at !== null && before.lease_expires_at > now;
    if (!wasOurs) {
      // Renewals are not audited (they happen every few seconds); taking the lease is.
      audit.append({
        runId,
        entity: 'run',
        entityId: runId,
        event: 'run.lease-acquired',
        actor: owner,
        detail: { expiresAt: expires, previousOwner: before.lease_owner, previousExpiresAt: before.lease_expires_at },
      });
    }
    return true;
  });

  const release = db.transaction((runId: string, owner: string): boolean => {
    leaseOf(runId);
    if (statements.release.run({ runId, owner, now: clock().toISOString() }).changes === 0) return false;
    audit.append({ runId, entity: 'run', entityId: runId, event: 'run.lease-released', actor: owner });
    return true;
  });

  return {
    acquireLease: (runId, owner, ttlMs) => acquire.immediate(runId, owner, ttlMs),
    renewLease: (runId, owner, ttlMs) => {
      const { now, expires } = times(ttlMs);
      leaseOf(runId);
      return statements.renew.run({ runId, owner, expires, now }).changes === 1;
    },
    releaseLease: (runId, owner) => release.immediate(runId, owner),
  };
}
