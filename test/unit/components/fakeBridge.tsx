/**
 * A stand-in `window.runbook` for component tests: answers the calls a test names and records
 * every call; anything unexpected answers { ok: false } so a test sees it in the error panel.
 */
import type { CallName, CallResult } from '../../../shared/contract.ts';
import { CALL_NAMES, splitCallName } from '../../../shared/contract.ts';

export type Answers = Partial<Record<CallName, (input: unknown) => unknown>>;

export interface FakeBridge {
  calls: { name: CallName; input: unknown }[];
  emit(event: string, payload: unknown): void;
}

export function installFakeBridge(answers: Answers): FakeBridge {
  const calls: FakeBridge['calls'] = [];
  const listeners = new Map<string, Set<(p: unknown) => void>>();
  const bridge: Record<string, unknown> = {};
  for (const name of CALL_NAMES) {
    const [domain, verb] = splitCallName(name);
    const group = (bridge[domain] ??= {}) as Record<string, unknown>;
    group[verb] = (input: unknown): Promise<CallResult<unknown>> => {
      calls.push({ name, input });
      const answer = answers[name];
      if (!answer) return Promise.resolve({ ok: false, error: { code: 'internal', message: `unexpected call ${name}` } });
      return Promise.resolve({ ok: true, value: answer(input) });
    };
  }
  bridge.on = (event: string, listener: (p: unknown) => void) => {
    let set = listeners.get(event);
    if (!set) listeners.set(event, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  };
  (globalThis as { runbook?: unknown }).runbook = bridge;
  return {
    calls,
    emit: (event, payload) => listeners.get(event)?.forEach((l) => l(payload)),
  };
}
