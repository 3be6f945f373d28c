/**
 * The evidence repositories of a store: identities, sign-offs, checkpoints. Built on the
 * store's own connection and audit repository (so their audit entries join the one chain),
 * once per store, and wrapped like the store's repos so SQLite errors become StoreErrors.
 */
import { guardRepo } from '../store/errors.ts';
import type { Store } from '../store/index.ts';
import { createCheckpointsRepo, type CheckpointsRepo } from './checkpoints.ts';
import { createIdentitiesRepo, type IdentitiesRepo } from './identities.ts';
import { createSignoffsRepo, type SignoffsRepo } from './signoffs.ts';

export interface EvidenceRepos {
  identities: IdentitiesRepo;
  signoffs: SignoffsRepo;
  checkpoints: CheckpointsRepo;
}

const cache = new WeakMap<Store, EvidenceRepos>();

export function evidenceRepos(store: Store, clock: () => Date = () => new Date()): EvidenceRepos {
  const cached = cache.get(store);
  if (cached) return cached;
  const repos: EvidenceRepos = {
    identities: guardRepo(store.file, createIdentitiesRepo(store.db, clock, store.audit)),
    signoffs: guardRepo(store.file, createSignoffsRepo(store.db, clock, store.audit)),
    checkpoints: guardRepo(store.file, createCheckpointsRepo(store.db, clock, store.audit)),
  };
  cache.set(store, repos);
  return repos;
}
