/**
 * `window.runbook` in browser mode, built by the SAME builder as the preload
 * (electron/preload/bridge.ts), over loopback HTTP instead of IPC: calls are POSTs, events
 * arrive by Server-Sent Events. Built by scripts/build-node.mjs into one script (browser-bridge.js)
 * that the server puts before the app's own. The token travels in an HttpOnly cookie, so this
 * script never holds it.
 */
import { buildBridge } from '../preload/bridge.ts';

interface EventSourceLike {
  addEventListener(type: string, listener: (message: { data: string }) => void): void;
}

const g = globalThis as unknown as {
  EventSource: new (url: string) => EventSourceLike;
  runbook?: unknown;
};

const listeners = new Map<string, Set<(payload: unknown) => void>>();
let source: EventSourceLike | null = null;

function listen(event: string): void {
  source ??= new g.EventSource('/__runbook/events');
  source.addEventListener(event, (message) => {
    const payload: unknown = JSON.parse(message.data);
    for (const l of listeners.get(event) ?? []) l(payload);
  });
}

const bridge = buildBridge({
  async invoke(channel, input) {
    let response: Response;
    try {
      response = await fetch(`/__runbook/call/${encodeURIComponent(channel)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(input),
        credentials: 'same-origin',
      });
    } catch (err) {
      return {
        ok: false,
        error: {
          code: 'unavailable',
          message: `the engine cannot be reached: ${err instanceof Error ? err.message : String(err)}`,
          hint: 'is the app (npm start) still running? start it again and open the address it prints',
        },
      };
    }
    if (!response.ok)
      return { ok: false, error: { code: 'internal', message: `the engine answered HTTP ${response.status}: ${await response.text()}` } };
    return response.json();
  },
  subscribe(event, listener) {
    let set = listeners.get(event);
    if (!set) {
      listeners.set(event, (set = new Set()));
      listen(event);
    }
    set.add(listener);
    return () => set.delete(listener);
  },
});

// Like contextBridge: one frozen, non-writable object.
Object.defineProperty(g, 'runbook', { value: bridge, writable: false, configurable: false, enumerable: true });
