/**
 * The preload (sandboxed: only `electron`'s renderer modules are available). It exposes one
 * object, `window.runbook`, built from the contract; ipcRenderer itself never reaches the page.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { buildBridge } from './bridge.ts';

contextBridge.exposeInMainWorld(
  'runbook',
  buildBridge({
    invoke: (channel, input) => ipcRenderer.invoke(channel, input),
    subscribe(event, listener) {
      // The IPC event object (with its sender) is dropped: the page gets the payload only.
      const forward = (_event: unknown, payload: unknown): void => listener(payload);
      ipcRenderer.on(event, forward);
      return () => {
        ipcRenderer.removeListener(event, forward);
      };
    },
  }),
);
