/**
 * Connections as the app sees them: the workspace's config file (read-only here) plus the
 * ones added in the app, kept in SQLite with their password encrypted by the host's SecretBox.
 * The engine reaches passwords the way the CLI does — through an environment — so every
 * engine module runs unchanged; that environment lives in this process only.
 */
import type { CallArgs } from '../../../shared/contract.ts';
import type { ConnectionSummary, ConnectionTest } from '../../../shared/contractTypes.ts';
import { InputError } from '../../../shared/errors.ts';
import { postgresConnectionSchema, redactUrl, type Config, type Connection } from '../../../shared/schemas.ts';
import type { Store } from '../store/index.ts';
import { createConnectionsRepo, type ConnectionsRepo } from '../store/repos/connections.ts';
import { openPg } from '../targets/postgres/connect.ts';
import { postgresEndpoint } from './prepare.ts';
import { ServiceError, type SecretBox } from './secrets.ts';
import type { AppSecretsService } from './appSecrets.ts';
import type { Workspace } from './workspace.ts';

export interface ConnectionsService {
  list: () => ConnectionSummary[];
  save: (args: CallArgs<'connections:save'>) => ConnectionSummary;
  remove(name: string): { removed: boolean };
  test: (name: string) => Promise<ConnectionTest>;
  /** The config and environment the engine runs with: file and app connections, passwords included. */
  effective(): { config: Config; env: NodeJS.ProcessEnv };
  /** Hides every password this process knows in a message before it leaves main. */
  redact: (text: string) => string;
}

interface Deps {
  workspace: Workspace;
  store: Store;
  secrets: SecretBox;
  actor: string;
  env: NodeJS.ProcessEnv;
  /** named secrets saved in the app (probe tokens, webhook URLs): they join the engine's environment */
  appSecrets?: AppSecretsService;
}

/** Not a real environment variable: only a key in the engine's own env object. */
const secretKey = (name: string) => `backfill-app-secret:${name}`;

export function createConnections(deps: Deps): ConnectionsService {
  const repo: ConnectionsRepo = createConnectionsRepo(deps.store.db, () => new Date(), deps.store.audit);
  const session = new Map<string, string>();
  const fileConnections = deps.workspace.config.connections;

  const passwordOf = (name: string): string | undefined => {
    const saved = repo.get(name);
    if (saved?.secret) return deps.secrets.decrypt(saved.secret.ciphertext);
    return session.get(name);
  };

  const effective = (): { config: Config; env: NodeJS.ProcessEnv } => {
    const env: NodeJS.ProcessEnv = { ...deps.env, ...deps.appSecrets?.env() };
    const connections: Record<string, Connection> = { ...fileConnections };
    for (const saved of repo.list()) {
      if (Object.hasOwn(fileConnections, saved.name)) continue; // the file wins; save() refuses the clash
      const password = passwordOf(saved.name);
      const entry = postgresConnectionSchema.parse({
        ...saved.settings,
        ...(password === undefined ? {} : { password_env: secretKey(saved.name) }),
      });
      if (password !== undefined) env[secretKey(saved.name)] = password;
      connections[saved.name] = entry;
    }
    return { config: { ...deps.workspace.config, connections }, env };
  };

  const summary = (name: string): ConnectionSummary => {
    const { config, env } = effective();
    const c = config.connections[name];
    if (!c) throw new ServiceError(`no connection "${name}"`, 'not-found', 'add it on the Workspace screen');
    const fromFile = Object.hasOwn(fileConnections, name);
    if (c.kind === 's3') return { name, kind: 's3', location: `s3://${c.bucket}`, source: fromFile ? 'config' : 'app', password: 'none' };
    const saved = repo.get(name);
    const password = saved?.secret
      ? 'saved'
      : session.has(name)
        ? 'session'
        : c.password_env && env[c.password_env] !== undefined
          ? 'environment'
          : 'none';
    return { name, kind: 'postgres', location: redactUrl(c.url), source: fromFile ? 'config' : 'app', password };
  };

  return {
    list: () => Object.keys(effective().config.connections).sort().map(summary),
    save(args) {
      if (Object.hasOwn(fileConnections, args.name)) {
        throw new InputError(
          `connection "${args.name}" is defined in ${deps.workspace.info.configFile ?? 'the config file'}: change it there, or pick another name`,
          { field: 'name', value: args.name },
        );
      }
      const parsed = postgresConnectionSchema.safeParse({ kind: 'postgres', url: args.url });
      if (!parsed.success)
        throw new InputError(`url: ${parsed.error.issues[0]?.message ?? 'not a postgres:// URL'}`, {
          field: 'url',
          value: redactUrl(args.url),
        });
      let secret: { ciphertext: Buffer; backend: 'os' | 'plain-text' } | null = null;
      session.delete(args.name);
      if (args.password !== undefined && args.password !== '') {
        if (args.remember === 'session' || deps.secrets.backend === 'unavailable') {
          session.set(args.name, args.password);
        } else if (deps.secrets.backend === 'plain-text' && !args.acceptPlainText) {
          throw new ServiceError(
            'this system offers no keychain: a saved password would be encrypted with a key anyone who can read your files can use',
            'plain-text-secret',
            'choose "this session only" (you will be asked again next time), or confirm that plain-text storage is acceptable',
          );
        } else {
          secret = { ciphertext: deps.secrets.encrypt(args.password), backend: deps.secrets.backend };
        }
      }
      repo.save({ name: args.name, kind: 'postgres', settings: { kind: 'postgres', url: parsed.data.url }, secret, actor: deps.actor });
      return summary(args.name);
    },
    remove(name) {
      if (Object.hasOwn(fileConnections, name))
        throw new InputError(`connection "${name}" is defined in the config file: remove it there`, { field: 'name', value: name });
      session.delete(name);
      return { removed: repo.remove(name, deps.actor) };
    },
    async test(name) {
      const { config, env } = effective();
      const endpoint = postgresEndpoint(config, name, 'name', env);
      const c = endpoint.connection;
      try {
        const client = await openPg({
          url: c.url,
          password: endpoint.password,
          statementTimeoutMs: 10_000,
          lockTimeoutMs: 1_000,
          connectTimeoutMs: Math.min(c.connect_timeout_ms, 10_000),
          applicationName: 'backfill-runbook-test',
        });
        try {
          const version = await client.query<{ v: string }>("select current_setting('server_version') as v");
          return { ok: true, message: `connected to PostgreSQL ${version.rows[0]?.v ?? '?'} at ${redactUrl(c.url)}` };
        } finally {
          await client.end().catch(() => undefined);
        }
      } catch (err) {
        return { ok: false, message: err instanceof Error ? err.message : String(err) };
      }
    },
    effective,
    redact(text) {
      let out = text;
      for (const name of [...session.keys(), ...repo.list().map((s) => s.name)]) {
        const password = passwordOf(name);
        if (password && password.length >= 4) out = out.split(password).join('***');
      }
      for (const value of Object.values(deps.appSecrets?.env() ?? {})) if (value.length >= 4) out = out.split(value).join('***');
      return out;
    },
  };
}
