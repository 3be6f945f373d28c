/**
 * What the engine hands the renderer through the contract (shared/contract.ts): plain JSON,
 * no secrets, no engine classes. Row shapes of the store stay in the engine; these are views.
 */
import type { CanaryBody } from './canary.ts';
import type { ImpactGraph } from './impact.ts';
import type { PartitionFlag } from './partitionFlags.ts';
import type { Approval } from './approval.ts';
import type { ChartRow } from './changeCharts.ts';
import type { KeyChange, KeyChangeTotals } from './keyChange.ts';
import type { NoteSection } from './noteBlocks.ts';
import type { RedFlag } from './redFlags.ts';
import type { RunEstimate } from './runEstimate.ts';
import type { SignalReading, ThrottleState } from './signals.ts';
import type { Job, Unit } from './schemas.ts';
import type { StepView } from './runbookSteps.ts';
import type { Tier } from './tier.ts';

export type RunStatusName = 'planned' | 'running' | 'paused' | 'halted' | 'canary' | 'abandoned' | 'failed' | 'succeeded';
export type PartitionStatusName = 'pending' | 'running' | 'validated' | 'published' | 'failed' | 'skipped';
export type SecretStorage = 'os' | 'plain-text' | 'unavailable';

export interface WorkspaceInfo {
  /** 'Sandbox' for the training workspace, else the folder's name */
  label: string;
  kind: 'sandbox' | 'folder';
  dir: string;
  dbFile: string;
  jobsDir: string;
  configFile: string | null;
}

export interface AppInfo {
  version: string;
  workspace: WorkspaceInfo;
  /** who acts here: recorded in the audit log and compared with signers (four eyes) */
  operator: string;
  secretStorage: SecretStorage;
  /** served by browser mode (a loopback server) in a browser, not by Electron */
  browserMode: boolean;
}

export interface ConnectionSummary {
  name: string;
  kind: 'postgres' | 's3';
  /** URL without any password, or s3://bucket */
  location: string;
  /** where it is defined: the workspace's backfill.config.yaml, or the app (SQLite) */
  source: 'config' | 'app';
  password: 'saved' | 'session' | 'environment' | 'none';
}

/** A secret saved in the app for a name the workspace's files use (a probe's token, a webhook's URL). Never its value. */
export interface SecretSummary {
  name: string;
  /** 'os': encrypted by the OS keychain · 'plain-text': encrypted with a key on disk · 'session': kept in memory until the app quits */
  storage: 'os' | 'plain-text' | 'session';
  updatedAt: string | null;
}

export interface ConnectionTest {
  ok: boolean;
  message: string;
}

export interface JobSummary {
  name: string;
  description: string | null;
  unit: Unit;
  timezone: string;
  writeMode: Job['write_mode'];
  /** `mart.mart_order_daily on warehouse` or `s3://…` */
  target: string;
  billing: boolean;
  externalPartner: boolean;
  downstream: string[];
  validationRules: number;
  qualityRules: number;
}

export interface JobList {
  jobs: JobSummary[];
  /** job files that could not be read, each message naming the file and field */
  problems: string[];
}

export interface JobDetail {
  summary: JobSummary;
  /** the parsed job: the plan form computes partitions, tier and red flags from it as you type */
  job: Job;
}

export interface PlanCreated {
  runId: string;
  planHash: string;
}

export interface RunSummary {
  runId: string;
  jobName: string;
  planHash: string;
  status: RunStatusName;
  tier: string | null;
  rangeFrom: string | null;
  rangeTo: string | null;
  unit: string | null;
  partitionsTotal: number;
  partitionsPublished: number;
  partitionsFailed: number;
  rowsWritten: number;
  requestedBy: string | null;
  executedBy: string | null;
  haltReason: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export interface PartitionCell {
  key: string;
  status: PartitionStatusName;
  rows: number | null;
  attempt: number;
  error: string | null;
  sourceCount: number | null;
  targetCount: number | null;
  /** the partition's evidence, where a view shows it (History) */
  checksum?: string | null;
  startedAt?: string | null;
  finishedAt?: string | null;
  durationMs?: number | null;
}

export interface RunbookView {
  run: RunSummary;
  plan: Record<string, unknown>;
  job: JobSummary;
  summary: string;
  tier: Tier;
  tierReasons: string[];
  flags: RedFlag[];
  steps: StepView[];
  /** an executor of this app is driving the run right now */
  live: boolean;
  partitions: PartitionCell[];
}

export interface SanityRow {
  rule: string;
  kind: string;
  severity: 'warn' | 'fail';
  value: number | null;
  threshold: string;
  ok: boolean;
  message: string;
}

export interface SanityView {
  evidenceId: number;
  blocked: boolean;
  results: SanityRow[];
  createdAt: string;
}

export interface SnapshotView {
  evidenceId: number;
  location: string;
  target: 's3' | 'postgres';
  partitions: { key: string; items: number; bytes: number | null; checksum: string | null }[];
  createdAt: string;
}

export type Measures = Record<string, string | number | null>;

export interface DryRunView {
  evidenceId: number;
  summary: string;
  downstream: string[];
  target: string;
  /** `source` is what the partition holds after the run (recomputed), `target` what it holds now */
  rows: {
    key: string;
    source: Measures;
    target: Measures;
    change: Measures;
    keys?: KeyChange;
    /** how long the dry run's read of it took */
    ms: number | null;
    /** its answers to the dry run's questions */
    flags: PartitionFlag[];
  }[];
  /** the change by key over every partition; null where the target cannot measure it (S3) */
  keys: KeyChangeTotals | null;
  /** the dry run's answers, one per question (and the run-level ones); empty for a dry run recorded before they were asked */
  redFlags: RedFlag[];
  estimate: RunEstimate | null;
  /** the impact scope derived from the catalog and the workspace; null for an older dry run */
  impact: ImpactGraph | null;
  createdAt: string;
}

/** The canary's comparison on record (shared/canary.ts): its partitions before → after. */
export interface CanaryView extends CanaryBody {
  evidenceId: number;
  createdAt: string;
}

/** Results of steps 1–3 already on record, so they can be opened again. */
export interface RecordedSteps {
  sanity: SanityView | null;
  snapshot: SnapshotView | null;
  dryRun: DryRunView | null;
  comparison: ComparisonView | null;
  canary: CanaryView | null;
}

export interface SignoffView {
  required: boolean;
  /** the sign-off that counts, if any */
  valid: { id: number; signer: string; signedAt: string; comment: string } | null;
  /** why each recorded sign-off does not count (four eyes, changed plan…) */
  problems: string[];
  planHash: string;
  /** what a sign-off of this plan approves, restated (the same as in the request file) */
  approves: Approval;
}

export interface IdentityView {
  name: string;
  role: 'operator' | 'lead';
  fingerprint: string;
  /** this machine holds the (passphrase-protected) private key */
  keyHere: boolean;
}

export interface ExportedFile {
  fileName: string;
  mimeType: string;
  text: string;
}

export interface ComparisonCheck {
  rule: string;
  source: Measures;
  target: Measures;
  diffRatio: number | null;
  tolerance: number;
  ok: boolean;
}

export interface ComparisonRow {
  key: string;
  /** the source's row count as the job's first validation rule measures it (`rows`) */
  sourceRows: number | null;
  /** the same measure on the target */
  targetRows: number | null;
  /** rows the target partition holds now */
  partitionRows: number | null;
  /** rows the target's marker says were published */
  markedRows: number | null;
  checks: ComparisonCheck[];
  /** targetRows − sourceRows; null when a side is unknown */
  difference: number | null;
  ok: boolean;
  problems: string[];
  /** what the run changed in this partition, by key: the partition now against its snapshot */
  keys?: KeyChange;
}

export interface ComparisonView {
  evidenceId: number;
  reconciliationEvidenceId: number | null;
  ok: boolean;
  rows: ComparisonRow[];
  /** what the run changed by key (against the snapshot), and what the dry run predicted */
  keys: { actual: KeyChangeTotals | null; predicted: KeyChangeTotals | null; why: string | null };
  createdAt: string;
}

export interface CloseView {
  evidenceId: number;
  summary: [string, string][];
  /** the incident note as exported at Close, in Markdown and HTML (one export, one head) */
  note: ExportedFile;
  html: ExportedFile;
  /** who signed the note's head, or null when nobody did */
  signedBy: string | null;
}

export interface HistoryPage {
  runs: RunSummary[];
  total: number;
}

export interface EvidenceHead {
  id: number;
  kind: string;
  createdAt: string;
  bodySha256: string;
}

export interface TimelineEntry {
  seq: number;
  at: string;
  event: string;
  entity: string;
  entityId: string;
  actor: string;
  fromStatus: string | null;
  toStatus: string | null;
  detail: string;
}

export interface RunDetail {
  run: RunSummary;
  partitions: PartitionCell[];
  evidence: EvidenceHead[];
  timeline: TimelineEntry[];
}

/** One partition's evidence, as History shows it when its cell is opened. */
export interface PartitionEvidenceView {
  key: string;
  /** what the dry run predicted for it, by key */
  predicted: KeyChange | null;
  /** what the run changed in it (against its snapshot), by key */
  actual: KeyChange | null;
  /** its reconciliation after the run */
  reconciliation: { ok: boolean; problems: string[]; targetCount: number | null; markedRows: number | null } | null;
}

/** A past run on one screen: its note's story sections, the charts' data, every partition with its evidence. */
export interface RunStoryView {
  /** "The story", "What changed" (without chart images), "Comments", "Downstream to notify" */
  sections: NoteSection[];
  /** the dry run per partition, for the charts */
  chartRows: ChartRow[];
  partitions: PartitionEvidenceView[];
}

export interface EvidenceView extends EvidenceHead {
  runId: string | null;
  planHash: string | null;
  body: unknown;
}

// ---- events: main → renderer ----

/** The executor's events as the renderer sees them (electron/engine/executor/events.ts). */
export type ExecutorEventView =
  | { type: 'run-started'; runId: string; total: number; toDo: number; published: number; resumed: boolean; concurrency: number }
  | { type: 'partition-resolved'; key: string; status: 'published' | 'pending'; reason: string }
  | { type: 'partition-started'; key: string; attempt: number }
  | { type: 'partition-published'; key: string; rows: number; ms: number; checksum: string }
  | { type: 'partition-retry'; key: string; attempt: number; delayMs: number; error: string }
  | { type: 'partition-failed'; key: string; error: string }
  | { type: 'stopping'; reason: string; kind: 'operator' | 'condition' }
  | { type: 'retuned'; concurrency: number; sleepMs: number }
  | { type: 'signals'; readings: SignalReading[] }
  | { type: 'throttled'; since: string; over: SignalReading[]; reason: string }
  | { type: 'throttle-ended'; since: string; throttledMs: number; reason: string; outcome: 'resumed' | 'halted' | 'stopped' }
  | { type: 'reconciled'; ok: number; problems: number }
  | {
      type: 'run-finished';
      runId: string;
      status: 'succeeded' | 'failed' | 'paused' | 'halted' | 'canary';
      published: number;
      failed: number;
      pending: number;
      rows: number;
      ms: number;
      reason: string | null;
    }
  | { type: 'engine-error'; message: string }
  /** no executor of this app drives the run any more (finished, paused, stopped or failed) */
  | { type: 'detached' };

export interface LiveStats {
  total: number;
  published: number;
  failed: number;
  pending: number;
  running: string[];
  rows: number;
  rowsPerMinute: number | null;
  etaSeconds: number | null;
  /** when the ledger last recorded a published partition */
  lastCheckpointAt: string | null;
  stop: { reason: string; kind: 'operator' | 'condition' } | null;
  /** throttled now: no new partition starts until the signals settle under their levels */
  throttle: ThrottleState | null;
}

export type ProgressEvent =
  | { kind: 'executor'; runId: string; at: string; event: ExecutorEventView; stats: LiveStats }
  | { kind: 'step'; runId: string; at: string; step: 'sanity' | 'snapshot' | 'dry-run'; done: number; total: number; key: string | null };

// ---- training (the Sandbox only) ----

/** A training scenario as the Training screen lists it (electron/engine/sandbox/scenarios.ts). */
export interface ScenarioView {
  id: number;
  slug: string;
  title: string;
  story: string;
  job: string;
  /** half-open, as a plan's range: from <= t < to */
  range: { from: string; to: string };
  /** what the trainee does, as `run-backfill` commands */
  steps: string[];
  /** what "fixed" means, in one sentence */
  fixed: string;
  /** why this build cannot run it; absent when it can */
  unavailable?: string;
}

/**
 * The Sandbox's own lead, so a trainee can practise the manual tier's sign-off. Its passphrase
 * is a training value shown on screen on purpose: it exists only in the Sandbox's keys folder.
 */
export interface SandboxLeadView {
  name: string;
  passphrase: string;
  fingerprint: string | null;
  /** why the lead cannot sign here (e.g. its key was made with another passphrase); absent when it can */
  problem?: string;
}

export interface TrainingView {
  scenarios: ScenarioView[];
  /** the scenario loaded last in this Sandbox, if any */
  current: { id: number; loadedAt: string } | null;
  /** null until a scenario has been loaded (loading makes the lead) */
  lead: SandboxLeadView | null;
}

export interface ScenarioLoadedView {
  scenario: ScenarioView;
  loadedAt: string;
  lead: SandboxLeadView;
}

export interface ScenarioCheckView {
  name: string;
  ok: boolean;
  detail: string;
}

export interface ScenarioVerdictView {
  scenario: ScenarioView;
  /** every check holds: the scenario is fixed */
  ok: boolean;
  checks: ScenarioCheckView[];
  loadedAt: string;
}
