/**
 * GitHub Desktop's trusted-sender check: an IPC message counts only when it comes from a
 * webContents we created AND its frame shows our own page (app://runbook/…, or the Vite dev
 * server during `npm start` development). A page that somehow navigated elsewhere, a subframe
 * of another origin, or a destroyed frame is refused.
 */
import type { IpcEventLike } from './handlers/ipc.ts';

export const APP_SCHEME = 'app';
export const APP_HOST = 'runbook';
export const APP_ENTRY = `${APP_SCHEME}://${APP_HOST}/index.html`;

/** True for URLs of our own content: app://runbook/… exactly, or the dev server's origin. */
export function isAppUrl(url: string, devServerUrl?: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol === `${APP_SCHEME}:` && parsed.host === APP_HOST && parsed.username === '' && parsed.password === '') return true;
  if (!devServerUrl) return false;
  try {
    return parsed.origin === new URL(devServerUrl).origin;
  } catch {
    return false;
  }
}

export interface TrustedSenders {
  /** Trust a webContents we created; forgotten when it is destroyed. */
  add(contents: { readonly id: number; once(event: 'destroyed', listener: () => void): unknown }): void;
  trust: (event: IpcEventLike) => boolean;
}

export function createTrustedSenders(devServerUrl?: string): TrustedSenders {
  const ids = new Set<number>();
  return {
    add(contents) {
      ids.add(contents.id);
      contents.once('destroyed', () => ids.delete(contents.id));
    },
    trust(event) {
      const frame = event.senderFrame;
      return ids.has(event.sender.id) && frame !== null && isAppUrl(frame.url, devServerUrl);
    },
  };
}
