// Evidence you can trust (issue 5): the audit chain's rule, identities and their keys, sign-offs
// and the four-eyes rules, signed checkpoints, incident notes, verification and archives.
// The app (electron/main) plugs Electron's safeStorage in behind KeyVault.
export { entryHash, GENESIS_HASH, type ChainedEntry, type ChainEntryContent } from './chain.ts';
export { verifyChain, type ChainBreak, type ChainReport } from './verifyChain.ts';
export { checkIdentityName, checkRole, fingerprint, generateKeys, publicKeyPem, signText, verifyText, ROLES, type Role } from './keys.ts';
export type { KeyVault, UnlockedIdentity, VaultIdentity } from './vault.ts';
export { createFileKeyVault, type FileKeyVaultOptions } from './fileVault.ts';
export { evidenceRepos, type EvidenceRepos } from './repos.ts';
export type { Identity, IdentitiesRepo } from './identities.ts';
export type { Signoff, SignoffsRepo } from './signoffs.ts';
export { checkpointText, type Checkpoint, type CheckpointReason, type CheckpointsRepo } from './checkpoints.ts';
export { checkRequest, readSignatureFile, signRequest, type SignatureFile, type SignoffRequest, type SignoffStatement } from './signoff.ts';
export { buildSignoffRequest, planHashForRequest } from './signoffRequest.ts';
export { operatorName, signoffProblem } from './signoffRules.ts';
export { exportBundle, type NoteFormat } from './exportNote.ts';
export type { NoteBundle } from './bundle.ts';
export { renderNote } from './note/render.ts';
export { buildNoteModel, NOTE_SECTIONS, type NoteModel } from './note/model.ts';
export { verifyBundle, type BundleVerification } from './verifyBundle.ts';
export { verifyDatabase, type DbVerification } from './verifyDb.ts';
export { buildArchive, importArchive, ledgerProblems, readArchive, type RunArchive } from './archive.ts';
