/**
 * How the app keeps connection passwords. The engine never encrypts by itself: the host gives
 * it a SecretBox — Electron's safeStorage in the app (electron/main/secrets.ts), a key file in
 * the browser-mode harness — and the store only ever receives its ciphertext.
 */
import type { SecretStorage } from '../../../shared/contractTypes.ts';

export interface SecretBox {
  /**
   * 'os': an OS keychain protects the key · 'plain-text': the OS offers no keychain, so
   * anyone who can read the user's files can decrypt (the user is warned and may decline) ·
   * 'unavailable': nothing can be saved, passwords live for the session only.
   */
  readonly backend: SecretStorage;
  encrypt: (plain: string) => Buffer;
  decrypt: (cipher: Buffer) => string;
}

/** Errors the service raises beyond InputError/GateError, with the code the contract reports. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    message: string,
    readonly code: 'not-found' | 'conflict' | 'unavailable' | 'plain-text-secret',
    readonly hint?: string,
  ) {
    super(message);
  }
}
