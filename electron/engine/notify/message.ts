/**
 * What a notification says, before it is shaped for Slack (Block Kit) or a generic webhook: one
 * title, one sentence, the facts as name/value pairs, and the same facts as data for machines.
 */
import type { NotifyEventName } from '../../../shared/notifyConfig.ts';

export type NotifyTone = 'info' | 'good' | 'warn' | 'danger';

export interface NotifyMessage {
  /** `test` is what `run-backfill notify test` sends */
  event: NotifyEventName | 'test';
  runId: string | null;
  title: string;
  /** one sentence: what happened and what to do */
  text: string;
  fields: [string, string][];
  tone: NotifyTone;
  at: string;
  /** a Sandbox run: every message says so */
  sandbox: boolean;
  /** the facts as data (the generic webhook's `data`) */
  data: Record<string, unknown>;
}

export function message(m: Omit<NotifyMessage, 'at' | 'sandbox'> & { sandbox?: boolean; at?: string }): NotifyMessage {
  const sandbox = m.sandbox ?? false;
  return { ...m, title: sandbox ? `[Sandbox] ${m.title}` : m.title, sandbox, at: m.at ?? new Date().toISOString() };
}
