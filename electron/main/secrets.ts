/**
 * Connection passwords at rest: Electron's safeStorage (the OS keychain: Keychain, DPAPI,
 * libsecret/kwallet). On Linux without a keychain safeStorage falls back to a hard-coded
 * key — "basic_text" — which protects nothing; the engine then warns and lets the user choose
 * not to save (connections.ts). The store only ever receives the ciphertext made here.
 */
import type { SafeStorage } from 'electron';
import type { SecretBox } from '../engine/runbook/secrets.ts';

type Storage = Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString'> & {
  getSelectedStorageBackend?: () => string;
};

export function safeStorageBox(safeStorage: Storage, platform: NodeJS.Platform = process.platform): SecretBox {
  const available = safeStorage.isEncryptionAvailable();
  const linuxBackend = platform === 'linux' ? safeStorage.getSelectedStorageBackend?.() : undefined;
  const backend = !available ? 'unavailable' : linuxBackend === 'basic_text' || linuxBackend === 'unknown' ? 'plain-text' : 'os';
  return {
    backend,
    encrypt: (plain) => safeStorage.encryptString(plain),
    decrypt: (cipher) => safeStorage.decryptString(cipher),
  };
}
