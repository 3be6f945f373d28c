/**
 * Actual Budget's security.ts habits: every webContents may only show our own page. No
 * navigation away, no new windows, no <webview>, no permission (camera, notifications,
 * geolocation…) is ever granted. Applied to every webContents as it is created.
 */
import type { Session, WebContents } from 'electron';
import { isAppUrl } from './trustedSender.ts';

type Contents = Pick<WebContents, 'on' | 'setWindowOpenHandler'>;
type PermissionSession = Pick<Session, 'setPermissionRequestHandler' | 'setPermissionCheckHandler' | 'setDevicePermissionHandler'>;

export function hardenWebContents(contents: Contents, devServerUrl?: string): void {
  const stay = (event: { preventDefault(): void }, url: string): void => {
    if (!isAppUrl(url, devServerUrl)) event.preventDefault();
  };
  contents.on('will-navigate', stay);
  contents.on('will-redirect', stay);
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
}

export function hardenSession(session: PermissionSession): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  session.setDevicePermissionHandler(() => false);
}
