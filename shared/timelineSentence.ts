/**
 * An audit entry as a sentence a person reads — "bob published partition 2026-05-03: 40 rows
 * (attempt 2)" — for History's timeline. The raw entry stays one click away; this is only how it
 * reads.
 */
import type { TimelineEntry } from './contractTypes.ts';

type Obj = Record<string, unknown>;

/** The entry's detail parsed, `{}` when empty, or its text as it is when it is not JSON (a hand-edited or damaged store). */
function parsedDetail(e: TimelineEntry): unknown {
  if (e.detail === '') return {};
  try {
    return JSON.parse(e.detail) as unknown;
  } catch {
    return e.detail;
  }
}

function detailOf(e: TimelineEntry): Obj {
  const parsed = parsedDetail(e);
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Obj) : {};
}

/** The entry as pretty JSON, for its "raw entry" view (the detail as parsedDetail gives it). */
export function rawEntry(e: TimelineEntry): string {
  const { seq, at, event, entity, entityId, fromStatus, toStatus, actor } = e;
  return JSON.stringify({ seq, at, event, entity, entityId, fromStatus, toStatus, actor, detail: parsedDetail(e) }, null, 2);
}

const text = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
const short = (hash: unknown) => (typeof hash === 'string' ? `${hash.slice(0, 12)}…` : '');

/** The sentence, and a tone for the eye: a failure or halt is `bad`, a publish or success `ok`. */
export function timelineSentence(e: TimelineEntry): { text: string; tone: 'ok' | 'bad' | 'info' } {
  const d = detailOf(e);
  const who = e.actor;
  const reason = typeof d.haltReason === 'string' ? `: ${d.haltReason}` : typeof d.reason === 'string' ? `: ${d.reason}` : '';
  switch (e.event) {
    case 'run.created':
      return {
        text: `${who} planned run ${e.entityId}${typeof d.partitions === 'number' ? ` of ${d.partitions} partitions` : ''}`,
        tone: 'info',
      };
    case 'run.started':
      return { text: `${who} started the run`, tone: 'info' };
    case 'run.resumed':
      return { text: `${who} resumed the run`, tone: 'info' };
    case 'run.retuned':
      return { text: `${who} retuned the run${typeof d.summary === 'string' ? `: ${d.summary}` : ''}`, tone: 'info' };
    case 'run.paused':
      return { text: `the run paused${reason}`, tone: 'bad' };
    case 'run.halted':
      return { text: `the run halted${reason}`, tone: 'bad' };
    case 'run.failed':
      return { text: `the run failed${reason}`, tone: 'bad' };
    case 'run.succeeded':
      return { text: 'the run succeeded: every partition published and reconciled', tone: 'ok' };
    case 'run.stop-condition':
      return { text: `a stop condition fired${typeof d.condition === 'string' ? ` (${d.condition})` : ''}${reason}`, tone: 'bad' };
    case 'run.lease-acquired':
      return { text: `${who} took the run's lease${typeof d.host === 'string' ? ` on ${d.host}` : ''}`, tone: 'info' };
    case 'run.lease-released':
      return { text: `${who} released the run's lease`, tone: 'info' };
    case 'plan.saved':
      return { text: `${who} saved the plan ${short(e.entityId)}`, tone: 'info' };
    case 'signoff.requested':
      return { text: `${who} asked for a lead's sign-off of plan ${short(e.entityId)}`, tone: 'info' };
    case 'signoff.imported':
      return { text: `${text(d.signer)}'s sign-off was recorded by ${who}`, tone: 'ok' };
    case 'evidence.added':
      return { text: `${who} captured evidence #${e.entityId}: ${text(d.kind ?? 'evidence')}`, tone: 'info' };
    case 'note.exported':
      return { text: `${who} exported the incident note (${text(d.format ?? '?')})`, tone: 'info' };
    case 'audit.checkpoint':
      return { text: `${text(d.signer ?? who)} signed the audit chain's head at seq ${text(d.seq)} (${text(d.reason ?? '')})`, tone: 'ok' };
    case 'archive.imported':
      return { text: `${who} imported the run from an archive for review`, tone: 'info' };
    default:
      break;
  }
  if (e.entity === 'partition') {
    const attempt = typeof d.attempt === 'number' && d.attempt > 1 ? ` (attempt ${d.attempt})` : '';
    switch (e.toStatus) {
      case 'running':
        return { text: `partition ${e.entityId} started${attempt}`, tone: 'info' };
      case 'validated':
        return {
          text: `partition ${e.entityId} validated${typeof d.rowsWritten === 'number' ? `: ${d.rowsWritten} rows` : ''}${attempt}`,
          tone: 'info',
        };
      case 'published':
        return {
          text: `partition ${e.entityId} published${typeof d.rowsWritten === 'number' ? `: ${d.rowsWritten} rows` : ''}${attempt}`,
          tone: 'ok',
        };
      case 'failed':
        return { text: `partition ${e.entityId} failed${typeof d.error === 'string' ? `: ${d.error}` : ''}${attempt}`, tone: 'bad' };
      case 'pending':
        return {
          text: `partition ${e.entityId} went back to pending${typeof d.error === 'string' ? ` after an error: ${d.error}` : ''}${attempt}`,
          tone: typeof d.error === 'string' ? 'bad' : 'info',
        };
      case null:
      default:
        return { text: `partition ${e.entityId}: ${e.fromStatus ?? '–'} → ${e.toStatus ?? '–'}`, tone: 'info' };
    }
  }
  const change = e.fromStatus || e.toStatus ? ` (${e.fromStatus ?? '–'} → ${e.toStatus ?? '–'})` : '';
  return { text: `${who}: ${e.event} ${e.entity} ${e.entityId}${change}`, tone: 'info' };
}
