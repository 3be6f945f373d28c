/**
 * Where private keys live. The CLI keeps each in a passphrase-protected file (FileKeyVault
 * below); the app will plug in Electron's safeStorage behind the same interface (electron/main
 * owns that). **Important**: a private key never enters SQLite and never leaves the vault
 * except as a KeyObject handed to the signer.
 */
import type { KeyObject } from 'node:crypto';
import type { Role } from './keys.ts';

/** The public half of an identity, as a vault remembers it beside the private key. */
export interface VaultIdentity {
  name: string;
  role: Role;
  publicKeyPem: string;
  fingerprint: string;
}

export interface UnlockedIdentity {
  identity: VaultIdentity;
  privateKey: KeyObject;
}

export interface KeyVault {
  /** Where keys are kept, for messages: a folder, a file, or "the system keychain". */
  readonly location: string;
  has(name: string): boolean;
  /** Encrypts and saves a new private key; refuses to replace an existing one. */
  save(identity: VaultIdentity, privateKey: KeyObject): void;
  /** Decrypts the private key of `name`; throws an InputError when it is missing or will not unlock. */
  unlock(name: string): UnlockedIdentity;
}
