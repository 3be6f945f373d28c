import type Database from 'better-sqlite3';
import { StoreError } from '../errors.ts';
import { settingsFromJson, settingsToJson, toRun, type RunRow } from '../rows.ts';
import type { Clock, Run, RunKind, RunSettings, RunStatus } from '../types.ts';
import type { AuditRepo } from './audit.ts';
import { createRunLeases, type RunLeases } from './leases.ts';

export interface RunInput {
  runId: string;
  jobName: string;
  planHash: string;
  jobHash: string;
  kind: RunKind;
  rangeFrom?: string | null;
  rangeTo?: string | null;
  unit?: string | null;
  timezone?: string | null;
  writeMode?: string | null;
  tier?: string | null;
  requestedBy?: string | null;
  executedBy?: string | null;
  settings?: RunSettings;
  /** In processing order; seq is the index. */
  partitions: readonly { key: string; start?: string | null; end?: string | null }[];
  actor: string;
}

export interface RunQuery {
  job?: string;
  status?: RunStatus;
  /** Case-insensitive substring of run id, job, plan hash, requester, executor or halt reason. */
  search?: string;
  limit?: number;
  offset?: number;
}

export interface SetStatusOptions {
  actor: string;
  haltReason?: string | null;
  /** Audit event name; defaults to `run.<status>` (e.g. 'run.resumed' instead of 'run.running'). */
  event?: string;
}

export interface RunsRepo extends RunLeases {
  create(input: RunInput): Run;
  get(runId: string): Run | undefined;
  /** Newest first. */
  list(query?: RunQuery): Run[];
  setStatus(runId: string, status: RunStatus, options: SetStatusOptions): Run;
  refreshCounters(runId: string): Run;
  /**
   * Merges the given settings over the stored ones (`stop` field by field); audited as
   * 'run.retuned' with both versions, and `detail` (what changed, in words; how).
   */
  updateSettings(runId: string, settings: RunSettings, actor: string, detail?: Record<string, unknown>): Run;
}

/** Statuses that stop the clock: a run sitting in one of them is not being worked. */
const STOPPED: ReadonlySet<RunStatus> = new Set(['succeeded', 'failed', 'halted', 'paused', 'canary', 'abandoned']);

export function createRunsRepo(
  db: Database.Database,
  clock: Clock,
  audit: AuditRepo,
  refreshCounters: (runId: string) => boolean,
): RunsRepo {
  const statements = {
    get: db.prepare<[string], RunRow>('SELECT * FROM runs WHERE run_id = ?'),
    planExists: db.prepare<[string], 1>('SELECT 1 FROM plans WHERE plan_hash = ?').pluck(),
    insertRun: db.prepare<Record<string, unknown>>(`
      INSERT INTO runs (run_id, job_name, plan_hash, job_hash, kind, range_from, range_to, unit, timezone,
        write_mode, tier, status, cursor, partitions_total, requested_by, executed_by, settings_json,
        created_at, updated_at)
      VALUES (@runId, @jobName, @planHash, @jobHash, @kind, @rangeFrom, @rangeTo, @unit, @timezone,
        @writeMode, @tier, 'planned', @cursor, @partitionsTotal, @requestedBy, @executedBy, @settingsJson,
        @now, @now)`),
    insertPartition: db.prepare<[string, string, number, string | null, string | null]>(
      'INSERT INTO partitions (run_id, partition_key, seq, start_at, end_at) VALUES (?, ?, ?, ?, ?)',
    ),
    list: db.prepare<Record<string, unknown>, RunRow>(`
      SELECT * FROM runs
      WHERE (@job IS NULL OR job_name = @job)
        AND (@status IS NULL OR status = @status)
        AND (@pattern IS NULL
             OR run_id LIKE @pattern ESCAPE '\\' OR job_name LIKE @pattern ESCAPE '\\'
             OR plan_hash LIKE @pattern ESCAPE '\\' OR requested_by LIKE @pattern ESCAPE '\\'
             OR executed_by LIKE @pattern ESCAPE '\\' OR halt_reason LIKE @pattern ESCAPE '\\')
      ORDER BY created_at DESC, run_id DESC
      LIMIT @limit OFFSET @offset`),
    setStatus: db.prepare<Record<string, unknown>, RunRow>(`
      UPDATE runs SET status = @status, started_at = @startedAt, finished_at = @finishedAt,
        halt_reason = @haltReason, updated_at = @now
      WHERE run_id = @runId RETURNING *`),
    setSettings: db.prepare<{ runId: string; settingsJson: string; now: string }, RunRow>(
      'UPDATE runs SET settings_json = @settingsJson, updated_at = @now WHERE run_id = @runId RETURNING *',
    ),
  };

  const mustGet = (runId: string): RunRow => {
    const row = statements.get.get(runId);
    if (row === undefined) throw new StoreError(`run ${runId} does not exist`, 'not-found');
    return row;
  };

  const create = db.transaction((input: RunInput): Run => {
    if (statements.get.get(input.runId) !== undefined) throw new StoreError(`run ${input.runId} already exists`, 'exists');
    if (statements.planExists.get(input.planHash) === undefined) {
      throw new StoreError(`plan ${input.planHash} is not saved; save the plan before creating run ${input.runId}`, 'not-found');
    }
    const keys = new Set<string>();
    for (const { key } of input.partitions) {
      if (keys.has(key)) throw new StoreError(`run ${input.runId} lists partition ${key} twice`, 'invalid');
      keys.add(key);
    }
    const settings = checkSettings(input.settings ?? {});
    statements.insertRun.run({
      runId: input.runId,
      jobName: input.jobName,
      planHash: input.planHash,
      jobHash: input.jobHash,
      kind: input.kind,
      rangeFrom: input.rangeFrom ?? null,
      rangeTo: input.rangeTo ?? null,
      unit: input.unit ?? null,
      timezone: input.timezone ?? null,
      writeMode: input.writeMode ?? null,
      tier: input.tier ?? null,
      cursor: input.partitions[0]?.key ?? null,
      partitionsTotal: input.partitions.length,
      requestedBy: input.requestedBy ?? null,
      executedBy: input.executedBy ?? null,
      settingsJson: settingsToJson(settings),
      now: clock().toISOString(),
    });
    input.partitions.forEach(({ key, start, end }, seq) => {
      statements.insertPartition.run(input.runId, key, seq, start ?? null, end ?? null);
    });
    audit.append({
      runId: input.runId,
      entity: 'run',
      entityId: input.runId,
      event: 'run.created',
      toStatus: 'planned',
      actor: input.actor,
      detail: { kind: input.kind, planHash: input.planHash, jobHash: input.jobHash, partitions: input.partitions.length },
    });
    return toRun(mustGet(input.runId));
  });

  const setStatus = db.transaction((runId: string, status: RunStatus, options: SetStatusOptions): Run => {
    const before = mustGet(runId);
    if (before.status === status && options.haltReason === undefined) return toRun(before);
    const now = clock().toISOString();
    const restarting = status === 'running' || status === 'planned';
    const row = statements.setStatus.get({
      runId,
      status,
      now,
      startedAt: status === 'running' && before.started_at === null ? now : before.started_at,
      finishedAt: STOPPED.has(status) ? now : restarting ? null : before.finished_at,
      // A resumed run is no longer halted for the old reason; the audit log keeps it.
      haltReason: options.haltReason !== undefined ? options.haltReason : status === 'running' ? null : before.halt_reason,
    });
    if (row === undefined) throw new Error(`run ${runId} vanished while updating`);
    audit.append({
      runId,
      entity: 'run',
      entityId: runId,
      event: options.event ?? `run.${status}`,
      fromStatus: before.status,
      toStatus: status,
      actor: options.actor,
      detail: options.haltReason === undefined ? {} : { haltReason: options.haltReason },
    });
    return toRun(row);
  });

  const updateSettings = db.transaction(
    (runId: string, settings: RunSettings, actor: string, detail: Record<string, unknown> = {}): Run => {
      const before = mustGet(runId);
      const from = settingsFromJson(before.settings_json);
      const stop = settings.stop === undefined ? from.stop : { ...from.stop, ...settings.stop };
      const to = checkSettings({ ...from, ...settings, ...(stop === undefined ? {} : { stop }) });
      const row = statements.setSettings.get({ runId, settingsJson: settingsToJson(to), now: clock().toISOString() });
      if (row === undefined) throw new Error(`run ${runId} vanished while updating`);
      audit.append({ runId, entity: 'run', entityId: runId, event: 'run.retuned', actor, detail: { ...detail, from, to } });
      return toRun(row);
    },
  );

  return {
    create: (input) => create.immediate(input),
    get: (runId) => {
      const row = statements.get.get(runId);
      return row === undefined ? undefined : toRun(row);
    },
    list: ({ job, status, search, limit = 100, offset = 0 } = {}) =>
      statements.list
        .all({
          job: job ?? null,
          status: status ?? null,
          pattern: search === undefined || search === '' ? null : `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
          limit,
          offset,
        })
        .map(toRun),
    setStatus: (runId, status, options) => setStatus.immediate(runId, status, options),
    refreshCounters: (runId) => {
      if (!refreshCounters(runId)) throw new StoreError(`run ${runId} does not exist`, 'not-found');
      return toRun(mustGet(runId));
    },
    updateSettings: (runId, settings, actor, detail) => updateSettings.immediate(runId, settings, actor, detail),
    ...createRunLeases(db, clock, audit),
  };
}

function checkSettings(settings: RunSettings): RunSettings {
  const { sleepMs, concurrency, dutyCycle } = settings;
  if (sleepMs !== undefined && !(Number.isInteger(sleepMs) && sleepMs >= 0)) {
    throw new StoreError(`settings.sleepMs must be a whole number of ms, 0 or more (got ${sleepMs})`, 'invalid');
  }
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) {
    throw new StoreError(`settings.concurrency must be a whole number, 1 or more (got ${concurrency})`, 'invalid');
  }
  if (dutyCycle !== undefined && !(dutyCycle > 0 && dutyCycle <= 1)) {
    throw new StoreError(`settings.dutyCycle must be above 0 and at most 1 (got ${dutyCycle})`, 'invalid');
  }
  return settings;
}
