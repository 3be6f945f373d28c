/**
 * Connections added in the app: the password is encrypted by the host's SecretBox before it
 * reaches SQLite, never comes back in a result, reaches the engine only through its private
 * environment, and the plain-text-only backend asks first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createConnections } from '../../electron/engine/runbook/connections.ts';
import type { SecretBox } from '../../electron/engine/runbook/secrets.ts';
import type { Workspace } from '../../electron/engine/runbook/workspace.ts';
import { openStore, type Store } from '../../electron/engine/store/index.ts';
import { fileSecretBox } from '../../electron/browser/fileSecretBox.ts';

const PASSWORD = 'hunter2-correct-horse';

/** Reversible and obviously not plain text: what the store receives must not contain the password. */
const box = (backend: SecretBox['backend']): SecretBox => ({
  backend,
  encrypt: (plain) => Buffer.from([...Buffer.from(plain)].map((b) => b ^ 0x5a)),
  decrypt: (cipher) => Buffer.from([...cipher].map((b) => b ^ 0x5a)).toString(),
});

const workspace: Workspace = {
  info: { label: 'w', kind: 'folder', dir: '/w', dbFile: ':memory:', jobsDir: '/w/jobs', configFile: '/w/backfill.config.yaml' },
  config: {
    connections: {
      warehouse: {
        kind: 'postgres',
        url: 'postgres://app@db/w',
        password_env: 'WAREHOUSE_PASSWORD',
        statement_timeout_ms: 1,
        lock_timeout_ms: 1,
        connect_timeout_ms: 1,
      },
    },
    sandbox: false,
  },
  stop: () => Promise.resolve(),
};

let store: Store;
beforeEach(() => {
  store = openStore(':memory:');
});
afterEach(() => store.close());

const make = (backend: SecretBox['backend'] = 'os', env: NodeJS.ProcessEnv = {}) =>
  createConnections({ workspace, store, secrets: box(backend), actor: 'ann@host', env });
const storedText = () =>
  JSON.stringify(store.db.prepare('SELECT * FROM connections').all()) +
  JSON.stringify(store.db.prepare("SELECT detail_json FROM audit_log WHERE entity = 'connection'").all());

describe('app connections', () => {
  it('saves the password encrypted, says so, and never returns it', () => {
    const c = make('os');
    const saved = c.save({
      name: 'lake',
      url: 'postgres://etl@lake:5432/raw',
      password: PASSWORD,
      remember: 'save',
      acceptPlainText: false,
    });
    expect(saved).toEqual({ name: 'lake', kind: 'postgres', location: 'postgres://etl@lake:5432/raw', source: 'app', password: 'saved' });
    expect(storedText()).not.toContain(PASSWORD);
    expect(store.db.prepare('SELECT secret_backend FROM connections').pluck().get()).toBe('os');
    expect(JSON.stringify(c.list())).not.toContain(PASSWORD);
  });

  it('hands the engine the password through its own environment only', () => {
    const c = make('os');
    c.save({ name: 'lake', url: 'postgres://etl@lake:5432/raw', password: PASSWORD, remember: 'save', acceptPlainText: false });
    const { config, env } = c.effective();
    const lake = config.connections.lake;
    expect(lake?.kind === 'postgres' && lake.password_env).toBe('backfill-app-secret:lake');
    expect(env['backfill-app-secret:lake']).toBe(PASSWORD);
    expect(process.env['backfill-app-secret:lake']).toBeUndefined();
    // a fresh service over the same store (an app restart) still decrypts it
    expect(make('os').effective().env['backfill-app-secret:lake']).toBe(PASSWORD);
  });

  it('with only a plain-text backend, asks before saving; "this session only" keeps it out of SQLite', () => {
    const c = make('plain-text');
    expect(() =>
      c.save({ name: 'lake', url: 'postgres://etl@lake/raw', password: PASSWORD, remember: 'save', acceptPlainText: false }),
    ).toThrow('this system offers no keychain: a saved password would be encrypted with a key anyone who can read your files can use');
    expect(store.db.prepare('SELECT count(*) FROM connections').pluck().get()).toBe(0);
    expect(
      c.save({ name: 'lake', url: 'postgres://etl@lake/raw', password: PASSWORD, remember: 'session', acceptPlainText: false }).password,
    ).toBe('session');
    expect(store.db.prepare('SELECT secret_ciphertext FROM connections').pluck().get()).toBeNull();
    expect(c.effective().env['backfill-app-secret:lake']).toBe(PASSWORD);
    expect(make('plain-text').effective().env['backfill-app-secret:lake']).toBeUndefined(); // gone after a restart
    expect(
      c.save({ name: 'lake', url: 'postgres://etl@lake/raw', password: PASSWORD, remember: 'save', acceptPlainText: true }).password,
    ).toBe('saved');
    expect(store.db.prepare('SELECT secret_backend FROM connections').pluck().get()).toBe('plain-text');
  });

  it.each<[string, Parameters<ReturnType<typeof make>['save']>[0], string]>([
    [
      'a password in the URL',
      { name: 'x', url: 'postgres://etl:hunter2@lake/raw', remember: 'save', acceptPlainText: false },
      'url: contains a password ("postgres://etl:***@lake/raw"): remove it and set password_env to the name of an environment variable that holds it',
    ],
    [
      'not a postgres URL',
      { name: 'x', url: 'mysql://lake/raw', remember: 'save', acceptPlainText: false },
      'url: must start with postgres:// or postgresql://, got "mysql://lake/raw"',
    ],
    [
      'a name the config file already uses',
      { name: 'warehouse', url: 'postgres://a@b/c', remember: 'save', acceptPlainText: false },
      'connection "warehouse" is defined in /w/backfill.config.yaml: change it there, or pick another name',
    ],
  ])('refuses %s', (_what, input, message) => {
    expect(() => make().save(input)).toThrow(message);
  });

  it('lists file and app connections, saying where each password comes from', () => {
    const c = make('os', { WAREHOUSE_PASSWORD: 'x' });
    c.save({ name: 'lake', url: 'postgres://etl@lake/raw', remember: 'save', acceptPlainText: false });
    expect(c.list()).toEqual([
      { name: 'lake', kind: 'postgres', location: 'postgres://etl@lake/raw', source: 'app', password: 'none' },
      { name: 'warehouse', kind: 'postgres', location: 'postgres://app@db/w', source: 'config', password: 'environment' },
    ]);
    expect(c.remove('lake')).toEqual({ removed: true });
    expect(() => c.remove('warehouse')).toThrow('connection "warehouse" is defined in the config file: remove it there');
  });

  it('redacts every known password from messages', () => {
    const c = make('os');
    c.save({ name: 'lake', url: 'postgres://etl@lake/raw', password: PASSWORD, remember: 'save', acceptPlainText: false });
    expect(c.redact(`password authentication failed: "${PASSWORD}"`)).toBe('password authentication failed: "***"');
  });
});

describe('the harness SecretBox', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bfr-box-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('round-trips, never stores plain text, and calls itself plain-text (its key sits on disk)', () => {
    const a = fileSecretBox(join(dir, 'k'));
    const cipher = a.encrypt(PASSWORD);
    expect(cipher.toString('latin1')).not.toContain(PASSWORD);
    expect(fileSecretBox(join(dir, 'k')).decrypt(cipher)).toBe(PASSWORD);
    expect(a.backend).toBe('plain-text');
    const tampered = Buffer.from(cipher);
    tampered.writeUInt8(tampered.readUInt8(tampered.length - 1) ^ 1, tampered.length - 1);
    expect(() => a.decrypt(tampered)).toThrow();
  });
});
