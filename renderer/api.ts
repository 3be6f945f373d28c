/**
 * The ONLY module that reads `window.runbook` (lint enforces it). Every call goes through
 * `call`, which returns the contract's Result; `act` also puts a failure into the one visible
 * error panel, so no engine error is ever lost or shown twice.
 */
import {
  splitCallName,
  type CallError,
  type CallInput,
  type CallName,
  type CallOutput,
  type CallResult,
  type EventName,
  type EventPayload,
  type RunbookBridge,
} from '../shared/contract.ts';
import { useApp } from './store/index.ts';

function bridge(): RunbookBridge | undefined {
  return (globalThis as { runbook?: RunbookBridge }).runbook;
}

const MISSING: CallError = {
  code: 'unavailable',
  message: 'window.runbook is missing: this page was opened outside Backfill Runbook',
  hint: 'start the app with `npm start` (or the desktop app) and use the address it prints',
};

export async function call<N extends CallName>(name: N, input: CallInput<N>): Promise<CallResult<CallOutput<N>>> {
  const b = bridge();
  if (!b) return { ok: false, error: MISSING };
  const [domain, verb] = splitCallName(name);
  const fn = (b as unknown as Record<string, Record<string, (input: unknown) => Promise<CallResult<CallOutput<N>>>>>)[domain]?.[verb];
  if (!fn)
    return {
      ok: false,
      error: {
        code: 'internal',
        message: `window.runbook has no ${name}: the app and its bridge are out of step`,
        hint: 'restart the app',
      },
    };
  try {
    return await fn(input);
  } catch (err) {
    return {
      ok: false,
      error: {
        code: 'internal',
        message: `${name} failed to reach the engine: ${err instanceof Error ? err.message : String(err)}`,
        hint: 'restart the app',
      },
    };
  }
}

/** Calls, and on failure shows the error in the error panel; resolves to the value or undefined. */
export async function act<N extends CallName>(name: N, input: CallInput<N>, doing: string): Promise<CallOutput<N> | undefined> {
  const result = await call(name, input);
  if (result.ok) return result.value;
  useApp.getState().pushError(doing, result.error);
  return undefined;
}

export function onEvent<E extends EventName>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
  const b = bridge();
  return b ? b.on(event, listener) : () => undefined;
}
