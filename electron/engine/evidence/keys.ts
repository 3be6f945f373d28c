/**
 * Ed25519 keys of operators and leads. A signature is over the UTF-8 bytes of a text (always an
 * RFC 8785 canonical JSON statement), so `openssl pkeyutl -verify -rawin` checks it without us.
 * A key is named by its fingerprint: SHA-256 of the public key's SubjectPublicKeyInfo (DER), in
 * hex — `openssl pkey -pubin -in key.pem -outform DER | sha256sum` prints the same.
 */
import { createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { InputError } from '../../../shared/errors.ts';
import { sha256Hex } from './chain.ts';

export const ROLES = ['operator', 'lead'] as const;
export type Role = (typeof ROLES)[number];

/** Lowercase letters, digits, dot, dash, underscore; no '@' (the CLI's actor is name@host). */
export const IDENTITY_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export function checkIdentityName(name: string, field = '--name'): string {
  if (!IDENTITY_NAME.test(name)) {
    throw new InputError(
      `identity name ${JSON.stringify(name)} is not allowed: use 1–64 lowercase letters, digits, '.', '-' or '_', starting with a letter or digit`,
      {
        field,
        value: name,
        hint: 'e.g. --name alice',
      },
    );
  }
  return name;
}

export function checkRole(role: string, field = '--role'): Role {
  if (!(ROLES as readonly string[]).includes(role))
    throw new InputError(`role ${JSON.stringify(role)} is not one of ${ROLES.join(', ')}`, { field, value: role });
  return role as Role;
}

export function generateKeys(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ed25519');
}

export function publicKeyPem(key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  return publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

/** Parses a PEM public key and insists on Ed25519; `where` names the file or field in errors. */
export function parsePublicKey(pem: string, where: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch (err) {
    throw new InputError(`${where} is not a PEM public key (${err instanceof Error ? err.message : String(err)})`, {
      file: where,
      hint: 'export one with `run-backfill identity export-public --name NAME`',
    });
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new InputError(`${where} holds a ${key.asymmetricKeyType ?? 'unknown'} key; identities use Ed25519 keys`, { file: where });
  }
  return key;
}

export function fingerprint(key: KeyObject | string): string {
  const object = typeof key === 'string' ? createPublicKey({ key, format: 'pem' }) : key.type === 'private' ? createPublicKey(key) : key;
  return sha256Hex(object.export({ type: 'spki', format: 'der' }));
}

/** The first 16 hex digits: enough for a person to compare, as in messages. */
export const shortFingerprint = (fp: string) => fp.slice(0, 16);

export function signText(privateKey: KeyObject, text: string): string {
  return sign(null, Buffer.from(text, 'utf8'), privateKey).toString('base64');
}

/** False for a bad signature, a malformed one, or a key that is not Ed25519: never throws. */
export function verifyText(publicKey: KeyObject | string, text: string, signatureBase64: string): boolean {
  try {
    const key = typeof publicKey === 'string' ? createPublicKey({ key: publicKey, format: 'pem' }) : publicKey;
    const signature = Buffer.from(signatureBase64, 'base64');
    if (signature.length !== 64 || signature.toString('base64') !== signatureBase64) return false;
    return verify(null, Buffer.from(text, 'utf8'), key, signature);
  } catch {
    return false;
  }
}
