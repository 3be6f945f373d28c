/**
 * The IPC contract (docs/design.md §3): the ONLY place a channel is named. Every call the renderer can
 * make, with a zod schema for its input and the type of its result; the events main sends.
 * From this one list the preload builds `window.runbook`, main registers its handlers and the
 * browser mode's server (electron/browser) serves the same handlers over loopback HTTP.
 *
 * **Important**: inputs are untrusted even from our own renderer. Schemas are strict (unknown
 * fields refused) and bounded (no megabyte strings), and results never carry a secret.
 */
import { z } from 'zod';
import type * as T from './contractTypes.ts';
import type { DownstreamPlan } from './downstreamPlans.ts';
import { connectionNameSchema, jobNameSchema, planSchema, REQUEST_ID } from './schemas.ts';
import { envNameSchema } from './envName.ts';

/** A call's declaration: its input schema and, as a type only, its result. */
export interface CallSpec<I extends z.ZodType, R> {
  readonly input: I;
  /** phantom: never set, carries the result type */
  readonly result?: R;
}

const call =
  <I extends z.ZodType>(input: I) =>
  <R>(): CallSpec<I, R> => ({ input });

const none = z.strictObject({});
const runId = z.string().regex(REQUEST_ID, 'must be a run id: letters, digits, ".", "_", ":" or "-" (at most 128)');
const byRun = z.strictObject({ runId });
const identityName = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'must be lowercase letters, digits, ".", "_" or "-" (at most 64)');
const passphrase = z.string().min(1, 'must not be empty').max(1024);
const comment = z.string().max(2000);
/** the operator's words for the incident note: paragraphs are fine */
const closingComment = z.string().max(20_000);
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD');
const scenarioId = z.number().int('must be a scenario number (1, 2, …)').positive('must be a scenario number (1, 2, …)').max(999);

export const CALLS = {
  'app:info': call(none)<T.AppInfo>(),
  'workspace:open': call(z.strictObject({ dir: z.string().min(1).max(4096) }))<T.WorkspaceInfo>(),
  'workspace:sandbox': call(none)<T.WorkspaceInfo>(),

  'connections:list': call(none)<T.ConnectionSummary[]>(),
  'connections:save': call(
    z.strictObject({
      name: connectionNameSchema,
      url: z.string().min(1).max(2048),
      /** crosses renderer → main only; never sent back */
      password: z.string().max(1024).optional(),
      /** keep the password across restarts (encrypted), or only for this session */
      remember: z.enum(['save', 'session']),
      /** the user accepted the warning that this OS only offers plain-text storage */
      acceptPlainText: z.boolean().default(false),
    }),
  )<T.ConnectionSummary>(),
  'connections:remove': call(z.strictObject({ name: connectionNameSchema }))<{ removed: boolean }>(),
  'connections:test': call(z.strictObject({ name: connectionNameSchema }))<T.ConnectionTest>(),

  /** Secrets for the names the workspace's files use (bearer_token_env, url_env, headers_env). */
  'secrets:list': call(none)<T.SecretSummary[]>(),
  'secrets:save': call(
    z.strictObject({
      name: envNameSchema,
      /** crosses renderer → main only; never sent back */
      value: z.string().min(1, 'must not be empty').max(8192),
      remember: z.enum(['save', 'session']),
      acceptPlainText: z.boolean().default(false),
    }),
  )<T.SecretSummary>(),
  'secrets:remove': call(z.strictObject({ name: envNameSchema }))<{ removed: boolean }>(),

  'jobs:list': call(none)<T.JobList>(),
  'jobs:get': call(z.strictObject({ name: jobNameSchema }))<T.JobDetail>(),

  'plans:create': call(z.strictObject({ plan: planSchema }))<T.PlanCreated>(),

  'runbook:get': call(byRun)<T.RunbookView>(),
  'runbook:recorded': call(byRun)<T.RecordedSteps>(),
  'runbook:sanity': call(byRun)<T.SanityView>(),
  'runbook:snapshot': call(byRun)<T.SnapshotView>(),
  'runbook:dryRun': call(byRun)<T.DryRunView>(),
  'runbook:signoffStatus': call(byRun)<T.SignoffView>(),
  'runbook:signoffRequest': call(byRun)<T.ExportedFile>(),
  'runbook:signHere': call(z.strictObject({ runId, signer: identityName, passphrase, comment }))<T.SignoffView>(),
  'runbook:importSignature': call(z.strictObject({ runId, text: z.string().min(1).max(1_000_000) }))<T.SignoffView>(),

  'identities:list': call(none)<T.IdentityView[]>(),
  'identities:create': call(
    z.strictObject({
      name: identityName,
      role: z.enum(['operator', 'lead']),
      passphrase: passphrase.min(8, 'must be at least 8 characters'),
    }),
  )<T.IdentityView>(),

  /** `reprocess` as the CLI's --reprocess: which partitions a resume (re)does — missing (default), failed, or all */
  'run:start': call(z.strictObject({ runId, reprocess: z.enum(['missing', 'failed', 'all']).optional() }))<{ started: boolean }>(),
  'run:pause': call(byRun)<{ requested: boolean }>(),
  'run:stop': call(byRun)<{ requested: boolean }>(),
  /** a run held after its canary, ended for good (a resume — run:start — is how it continues) */
  'run:abandon': call(z.strictObject({ runId, reason: comment }))<T.RunSummary>(),
  'run:compare': call(byRun)<T.ComparisonView>(),
  /** `signer` + `passphrase`: whose key signs the note's head (the chain's checkpoint), asked at Close */
  'run:close': call(
    z.strictObject({ runId, comment: closingComment, signer: identityName.optional(), passphrase: passphrase.optional() }),
  )<T.CloseView>(),
  /** a plan for each job downstream of the target (from the dry run's impact graph), in the order they must run */
  'run:downstreamPlans': call(byRun)<DownstreamPlan[]>(),
  'run:note': call(
    z.strictObject({ runId, format: z.enum(['md', 'html']), signer: identityName.optional(), passphrase: passphrase.optional() }),
  )<T.ExportedFile>(),

  'history:list': call(
    z.strictObject({
      search: z.string().max(200).optional(),
      job: jobNameSchema.optional(),
      status: z.enum(['planned', 'running', 'paused', 'halted', 'canary', 'abandoned', 'failed', 'succeeded']).optional(),
      from: day.optional(),
      to: day.optional(),
      limit: z.number().int().min(1).max(1000).default(200),
      offset: z.number().int().min(0).max(10_000_000).default(0),
    }),
  )<T.HistoryPage>(),
  'history:get': call(byRun)<T.RunDetail>(),
  'history:story': call(byRun)<T.RunStoryView>(),
  'evidence:get': call(z.strictObject({ id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER) }))<T.EvidenceView>(),

  /** The Sandbox only: a folder workspace is refused (loading a scenario resets the data). */
  'training:list': call(none)<T.TrainingView>(),
  'training:load': call(z.strictObject({ id: scenarioId }))<T.ScenarioLoadedView>(),
  'training:check': call(z.strictObject({ id: scenarioId }))<T.ScenarioVerdictView>(),
} as const;

/** Events main sends; the renderer may only listen to these. */
export const EVENTS = {
  'run:progress': {} as T.ProgressEvent,
} as const;

export type CallName = keyof typeof CALLS;
export type EventName = keyof typeof EVENTS;
export type CallInput<N extends CallName> = z.input<(typeof CALLS)[N]['input']>;
/** The input after parsing (defaults filled in): what the engine receives. */
export type CallArgs<N extends CallName> = z.output<(typeof CALLS)[N]['input']>;
export type CallOutput<N extends CallName> = (typeof CALLS)[N] extends CallSpec<z.ZodType, infer R> ? R : never;
export type EventPayload<E extends EventName> = (typeof EVENTS)[E];

export const CALL_NAMES = Object.keys(CALLS) as CallName[];
export const EVENT_NAMES = Object.keys(EVENTS) as EventName[];

export type ErrorCode =
  | 'input'
  | 'gate'
  | 'not-found'
  | 'conflict'
  | 'unavailable'
  | 'plain-text-secret'
  | 'store'
  /** a server (PostgreSQL, S3) cannot be reached or refused the session */
  | 'connection'
  | 'untrusted-sender'
  | 'internal';

export interface CallError {
  message: string;
  code: ErrorCode;
  /** what to do next */
  hint?: string;
  field?: string;
  /** each reason a gate refused */
  reasons?: string[];
}

export type CallResult<V> = { ok: true; value: V } | { ok: false; error: CallError };

// ---- the shape of window.runbook: one function per call, grouped by domain ----

export type Domain = CallName extends `${infer D}:${string}` ? D : never;
type CallsOf<D extends Domain> = Extract<CallName, `${D}:${string}`>;
type VerbOf<N extends string> = N extends `${string}:${infer V}` ? V : never;

export type RunbookBridge = {
  readonly [D in Domain]: { readonly [N in CallsOf<D> as VerbOf<N>]: (input: CallInput<N>) => Promise<CallResult<CallOutput<N>>> };
} & {
  /** Listens to a contract event; returns the function that stops listening. */
  on<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void;
};

/** What main must implement: one function per call, taking the parsed input. */
export type Handlers = {
  readonly [D in Domain]: { readonly [N in CallsOf<D> as VerbOf<N>]: (args: CallArgs<N>) => Promise<CallOutput<N>> | CallOutput<N> };
};

/** 'runbook:dryRun' → ['runbook', 'dryRun'] */
export function splitCallName(name: CallName): [Domain, string] {
  const at = name.indexOf(':');
  return [name.slice(0, at) as Domain, name.slice(at + 1)];
}
