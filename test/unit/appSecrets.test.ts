/**
 * Secrets saved in the app for the names files use instead of values (a probe's
 * bearer_token_env, a notify target's url_env): kept encrypted by the host's SecretBox in
 * migration 005's table, never returned, never audited by value, and laid into the engine's
 * own environment — where the probes and the notifier read them, as the CLI reads variables.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { createAppSecrets } from '../../electron/engine/runbook/appSecrets.ts';
import { createConnections } from '../../electron/engine/runbook/connections.ts';
import type { SecretBox } from '../../electron/engine/runbook/secrets.ts';
import type { Workspace } from '../../electron/engine/runbook/workspace.ts';
import { openStore, type Store } from '../../electron/engine/store/index.ts';
import { MIGRATIONS } from '../../electron/engine/store/migrations/index.ts';
import { migrateDatabase } from '../../electron/engine/store/migrate.ts';
import { probeHeaders } from '../../electron/engine/safety/probes/httpProbe.ts';
import { Notifier } from '../../electron/engine/notify/notifier.ts';

const TOKEN = 'prom-token-7c1e9a';
const HOOK = 'https://hooks.slack.com/services/T000/B000/secret-path';

const box = (backend: SecretBox['backend']): SecretBox => ({
  backend,
  encrypt: (plain) => Buffer.from([...Buffer.from(plain)].map((b) => b ^ 0x5a)),
  decrypt: (cipher) => Buffer.from([...cipher].map((b) => b ^ 0x5a)).toString(),
});

const workspace: Workspace = {
  info: { label: 'w', kind: 'folder', dir: '/w', dbFile: ':memory:', jobsDir: '/w/jobs', configFile: '/w/backfill.config.yaml' },
  config: { connections: {}, sandbox: false },
  stop: () => Promise.resolve(),
};

let store: Store;
beforeEach(() => {
  store = openStore(':memory:');
});
afterEach(() => store.close());

const stored = () =>
  JSON.stringify(store.db.prepare('SELECT name, hex(ciphertext) AS c, backend FROM app_secrets').all()) +
  JSON.stringify(store.db.prepare("SELECT detail_json FROM audit_log WHERE entity = 'secret'").all());

describe('migration 005', () => {
  it('creates app_secrets, STRICT, with the backend checked', () => {
    const db = new Database(':memory:');
    migrateDatabase(db, { file: ':memory:', clock: () => new Date('2026-11-30T12:00:00Z'), migrations: MIGRATIONS.slice(0, 5) });
    expect(db.prepare(`SELECT strict FROM pragma_table_list WHERE name = 'app_secrets'`).get()).toEqual({ strict: 1 });
    expect(() => db.prepare(`INSERT INTO app_secrets VALUES ('X', x'00', 'none', '2026', '2026')`).run()).toThrow(
      /CHECK constraint failed/,
    );
    db.close();
  });
});

describe('app secrets', () => {
  it('saves a value encrypted, lists its name and how it is kept, never the value', () => {
    const s = createAppSecrets({ store, secrets: box('os'), actor: 'ann@host' });
    expect(s.save({ name: 'PROM_TOKEN', value: TOKEN, remember: 'save', acceptPlainText: false })).toMatchObject({
      name: 'PROM_TOKEN',
      storage: 'os',
    });
    expect(JSON.stringify(s.list())).not.toContain(TOKEN);
    expect(stored()).not.toContain(TOKEN);
    expect(stored()).not.toContain(Buffer.from(TOKEN).toString('hex').toUpperCase());
    expect(s.env()).toEqual({ PROM_TOKEN: TOKEN });
    // survives the app: a new service on the same store reads it back
    expect(createAppSecrets({ store, secrets: box('os'), actor: 'ann@host' }).env()).toEqual({ PROM_TOKEN: TOKEN });
  });

  it('where the OS has no keychain, saving asks first; "this session only" keeps it in memory', () => {
    const s = createAppSecrets({ store, secrets: box('plain-text'), actor: 'ann@host' });
    expect(() => s.save({ name: 'HOOK_URL', value: HOOK, remember: 'save', acceptPlainText: false })).toThrow(/offers no keychain/);
    expect(s.save({ name: 'HOOK_URL', value: HOOK, remember: 'session', acceptPlainText: false }).storage).toBe('session');
    expect(store.db.prepare('SELECT count(*) AS n FROM app_secrets').get()).toEqual({ n: 0 });
    expect(s.env()).toEqual({ HOOK_URL: HOOK });
    expect(createAppSecrets({ store, secrets: box('plain-text'), actor: 'ann@host' }).env()).toEqual({});
    expect(s.remove('HOOK_URL')).toEqual({ removed: true });
    expect(s.env()).toEqual({});
  });

  it('reaches the engine through its environment: a probe token and a webhook URL resolve, and messages hide them', () => {
    const appSecrets = createAppSecrets({ store, secrets: box('os'), actor: 'ann@host' });
    appSecrets.save({ name: 'PROM_TOKEN', value: TOKEN, remember: 'save', acceptPlainText: false });
    appSecrets.save({ name: 'SLACK_WEBHOOK_URL', value: HOOK, remember: 'save', acceptPlainText: false });
    const connections = createConnections({ workspace, store, secrets: box('os'), actor: 'ann@host', env: {}, appSecrets });
    const { env } = connections.effective();
    const headers = probeHeaders(
      { kind: 'prometheus', name: 'cpu', url: 'http://prom:9090', query: 'up', max: 1, bearer_token_env: 'PROM_TOKEN' },
      'stop.probes[0]',
      env,
    );
    expect(headers.authorization).toBe(`Bearer ${TOKEN}`);
    const notifier = new Notifier({
      config: { targets: { oncall: { kind: 'slack', url_env: 'SLACK_WEBHOOK_URL' } }, throttled_after_min: 10 },
      env,
      strict: true,
    });
    expect(notifier.targets.map((t) => [t.name, t.url])).toEqual([['oncall', HOOK]]);
    expect(connections.redact(`Bearer ${TOKEN} at ${HOOK}`)).toBe('Bearer *** at ***');
    expect(appSecrets.remove('PROM_TOKEN')).toEqual({ removed: true });
    expect(connections.effective().env.PROM_TOKEN).toBeUndefined();
    expect(store.db.prepare(`SELECT event FROM audit_log WHERE entity = 'secret' ORDER BY seq`).all()).toEqual([
      { event: 'secret.created' },
      { event: 'secret.created' },
      { event: 'secret.removed' },
    ]);
  });
});
