/**
 * Builds `window.runbook` from the contract: one function per call, grouped by domain
 * (`runbook.history.list(input)`), and `on(event, listener)` for the contract's events only.
 * No generic invoke: the page cannot name a channel the contract does not list. Pure, so the
 * preload (ipcRenderer) and the test harness (fetch + EventSource) build the same object.
 */
import { CALL_NAMES, EVENT_NAMES, splitCallName, type CallName, type EventName, type RunbookBridge } from '../../shared/contract.ts';

export interface BridgeTransport {
  invoke: (channel: CallName, input: unknown) => Promise<unknown>;
  subscribe: (event: EventName, listener: (payload: unknown) => void) => () => void;
}

export function buildBridge(transport: BridgeTransport): RunbookBridge {
  const domains: Record<string, Record<string, (input?: unknown) => Promise<unknown>>> = {};
  for (const name of CALL_NAMES) {
    const [domain, verb] = splitCallName(name);
    (domains[domain] ??= {})[verb] = (input?: unknown) => transport.invoke(name, input ?? {});
  }
  const on = (event: EventName, listener: (payload: unknown) => void): (() => void) => {
    if (!(EVENT_NAMES as string[]).includes(event))
      throw new Error(`unknown event ${String(event)}: the contract lists ${EVENT_NAMES.join(', ')}`);
    if (typeof listener !== 'function') throw new Error('listener must be a function');
    return transport.subscribe(event, listener);
  };
  return Object.freeze({ ...domains, on }) as unknown as RunbookBridge;
}
