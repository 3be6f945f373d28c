/**
 * Secrets saved in the app for the names the workspace's files use instead of values — a
 * probe's `bearer_token_env`, a notify target's `url_env`, a header's variable. The engine
 * reads them as the CLI reads environment variables: from its own environment object, which
 * lives in this process only. **Important**: a value never crosses back to the renderer; where
 * the OS offers no keychain, saving asks first and offers "this session only" instead.
 */
import type { CallArgs } from '../../../shared/contract.ts';
import type { SecretSummary } from '../../../shared/contractTypes.ts';
import type { Store } from '../store/index.ts';
import { createAppSecretsRepo } from '../store/repos/appSecrets.ts';
import { ServiceError, type SecretBox } from './secrets.ts';

export interface AppSecretsService {
  list(): SecretSummary[];
  save(args: CallArgs<'secrets:save'>): SecretSummary;
  remove(name: string): { removed: boolean };
  /** name → value, laid into the engine's environment */
  env(): Record<string, string>;
}

export function createAppSecrets(deps: { store: Store; secrets: SecretBox; actor: string }): AppSecretsService {
  const repo = createAppSecretsRepo(deps.store.db, () => new Date(), deps.store.audit);
  const session = new Map<string, string>();
  const summary = (name: string): SecretSummary => {
    const saved = repo.list().find((s) => s.name === name);
    if (saved) return { name, storage: saved.backend, updatedAt: saved.updatedAt };
    return { name, storage: 'session', updatedAt: null };
  };
  return {
    list: () => {
      const names = new Set([...repo.list().map((s) => s.name), ...session.keys()]);
      return [...names].sort().map(summary);
    },
    save(args) {
      if (args.remember === 'session' || deps.secrets.backend === 'unavailable') {
        repo.remove(args.name, deps.actor);
        session.set(args.name, args.value);
        return summary(args.name);
      }
      if (deps.secrets.backend === 'plain-text' && !args.acceptPlainText)
        throw new ServiceError(
          'this system offers no keychain: a saved secret would be encrypted with a key anyone who can read your files can use',
          'plain-text-secret',
          'choose "this session only" (you will be asked again next time), or confirm that plain-text storage is acceptable',
        );
      session.delete(args.name);
      repo.save({ name: args.name, ciphertext: deps.secrets.encrypt(args.value), backend: deps.secrets.backend, actor: deps.actor });
      return summary(args.name);
    },
    remove(name) {
      const wasSession = session.delete(name);
      return { removed: repo.remove(name, deps.actor) || wasSession };
    },
    env() {
      const env: Record<string, string> = {};
      for (const s of repo.list()) env[s.name] = deps.secrets.decrypt(s.ciphertext);
      for (const [name, value] of session) env[name] = value;
      return env;
    },
  };
}
