/**
 * The CLI's KeyVault: one JSON file per identity, `<dir>/<name>.key` (or one --key-file).
 * The private key (PKCS#8 DER) is encrypted with AES-256-GCM under a key derived from the
 * passphrase by scrypt (N=2^15, r=8, p=1, 16-byte salt); the file's header — format, name,
 * role, public key and KDF parameters — is the GCM additional data, so editing any of it makes
 * the file refuse to unlock. Chosen over encrypted PKCS#8 PEM because Node writes those with
 * PBKDF2 at a low iteration count that cannot be raised.
 */
import { createCipheriv, createDecipheriv, createPrivateKey, randomBytes, scryptSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { canonicalJson } from '../../../shared/canonicalJson.ts';
import { InputError } from '../../../shared/errors.ts';
import { LIMITS } from '../../../shared/limits.ts';
import { readBoundedText } from '../input/boundedFile.ts';
import { checkIdentityName, fingerprint, publicKeyPem, ROLES } from './keys.ts';
import type { KeyVault, UnlockedIdentity, VaultIdentity } from './vault.ts';

const FORMAT = 'backfill-runbook/private-key@1';
const SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const;
const MIN_PASSPHRASE = 8;

const keyFileSchema = z.object({
  format: z.literal(FORMAT),
  name: z.string(),
  role: z.enum(ROLES),
  publicKeyPem: z.string(),
  fingerprint: z.string(),
  kdf: z.object({ name: z.literal('scrypt'), N: z.number().int(), r: z.number().int(), p: z.number().int(), salt: z.string() }),
  cipher: z.object({ name: z.literal('aes-256-gcm'), iv: z.string(), tag: z.string() }),
  ciphertext: z.string(),
});
type KeyFile = z.infer<typeof keyFileSchema>;

export interface FileKeyVaultOptions {
  /** Folder of `<name>.key` files. */
  dir: string;
  /** One explicit file instead (`--key-file`): it holds exactly one identity. */
  file?: string;
  /** Asked only when a key is saved or unlocked. */
  passphrase: () => string;
}

export function createFileKeyVault(options: FileKeyVaultOptions): KeyVault {
  const fileOf = (name: string) => options.file ?? join(options.dir, `${name}.key`);

  function passphrase(): string {
    const text = options.passphrase();
    if (text.length < MIN_PASSPHRASE) {
      throw new InputError(`the passphrase is too short (${text.length} characters): use at least ${MIN_PASSPHRASE}`, {
        field: 'passphrase',
      });
    }
    return text;
  }

  return {
    location: options.file ?? options.dir,
    has: (name) => existsSync(fileOf(name)),
    save(identity, privateKey) {
      const file = fileOf(identity.name);
      if (existsSync(file)) {
        throw new InputError(`a private key for ${identity.name} already exists at ${file}: it is never overwritten`, {
          file,
          hint: 'choose another --name or --key-file, or move the old file aside yourself',
        });
      }
      const header = {
        format: FORMAT as typeof FORMAT,
        name: identity.name,
        role: identity.role,
        publicKeyPem: identity.publicKeyPem,
        fingerprint: identity.fingerprint,
      };
      const kdf = { name: 'scrypt' as const, ...SCRYPT, salt: randomBytes(16).toString('base64') };
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', derive(passphrase(), kdf), iv);
      cipher.setAAD(Buffer.from(canonicalJson({ ...header, kdf }), 'utf8'));
      const der = privateKey.export({ type: 'pkcs8', format: 'der' });
      const ciphertext = Buffer.concat([cipher.update(der), cipher.final()]);
      const content: KeyFile = {
        ...header,
        kdf,
        cipher: { name: 'aes-256-gcm', iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64') },
        ciphertext: ciphertext.toString('base64'),
      };
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      // 'wx': never replace a key, even one created between the check above and now.
      writeFileSync(file, `${JSON.stringify(content, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
    },
    unlock(name): UnlockedIdentity {
      const file = fileOf(name);
      const content = readKeyFile(file);
      if (content.name !== name) {
        throw new InputError(`${file} holds the key of ${content.name}, not ${name}`, { file, field: '--identity', value: name });
      }
      let der: Buffer;
      try {
        const decipher = createDecipheriv('aes-256-gcm', derive(passphrase(), content.kdf), Buffer.from(content.cipher.iv, 'base64'));
        const { format, role, publicKeyPem: pem, kdf } = content;
        decipher.setAAD(
          Buffer.from(
            canonicalJson({ format, name: content.name, role, publicKeyPem: pem, fingerprint: content.fingerprint, kdf }),
            'utf8',
          ),
        );
        decipher.setAuthTag(Buffer.from(content.cipher.tag, 'base64'));
        der = Buffer.concat([decipher.update(Buffer.from(content.ciphertext, 'base64')), decipher.final()]);
      } catch {
        throw new InputError(`the passphrase does not unlock ${name}'s key in ${file} (or the file was altered)`, {
          file,
          hint: 'check the passphrase (the variable named by --passphrase-env)',
        });
      }
      const privateKey: KeyObject = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
      const identity: VaultIdentity = {
        name: content.name,
        role: content.role,
        publicKeyPem: publicKeyPem(privateKey),
        fingerprint: fingerprint(privateKey),
      };
      if (identity.fingerprint !== content.fingerprint)
        throw new InputError(`${file}: the private key does not match the public key recorded beside it`, { file });
      return { identity, privateKey };
    },
  };
}

/** The public half of a key file, readable without the passphrase. */
export function readKeyFile(file: string): KeyFile {
  let text: string;
  try {
    text = readBoundedText(file, { what: 'key file', limit: LIMITS.keyFileBytes });
  } catch (err) {
    if (err instanceof InputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(code === 'ENOENT' ? `no private key at ${file}` : `cannot read ${file}: ${(err as Error).message}`, {
      file,
      hint: 'create one with `run-backfill identity create --name NAME --role lead|operator`, or pass --key-file',
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InputError(`${file} is not a Backfill Runbook key file (not JSON)`, { file });
  }
  const result = keyFileSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new InputError(
      `${file} is not a Backfill Runbook key file: field "${issue?.path.join('.') ?? ''}" ${issue?.message ?? 'is invalid'}`,
      { file },
    );
  }
  checkIdentityName(result.data.name, 'name');
  return result.data;
}

function derive(passphrase: string, kdf: { N: number; r: number; p: number; salt: string }): Buffer {
  return scryptSync(passphrase.normalize('NFC'), Buffer.from(kdf.salt, 'base64'), 32, {
    N: kdf.N,
    r: kdf.r,
    p: kdf.p,
    maxmem: 256 * 1024 * 1024,
  });
}
