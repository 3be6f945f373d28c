/**
 * Browser mode's SecretBox (it has no Electron, so no safeStorage): AES-256-GCM under
 * a random key kept in a 0600 file beside the ledger. The key sits on disk next to the data,
 * which is exactly what Electron's plain-text backend amounts to, so it says 'plain-text' and
 * the app warns before saving a password with it.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SecretBox } from '../engine/runbook/secrets.ts';

export function fileSecretBox(keyFile: string): SecretBox {
  if (!existsSync(keyFile)) {
    mkdirSync(dirname(keyFile), { recursive: true, mode: 0o700 });
    writeFileSync(keyFile, randomBytes(32), { mode: 0o600, flag: 'wx' });
  }
  const key = readFileSync(keyFile);
  if (key.length !== 32) throw new Error(`${keyFile} is not a 32-byte key: remove it to make a new one (saved passwords are then lost)`);
  return {
    backend: 'plain-text',
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), body]);
    },
    decrypt(data) {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, 12));
      decipher.setAuthTag(data.subarray(12, 28));
      return Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}
