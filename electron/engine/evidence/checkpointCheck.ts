/**
 * Checks signed checkpoints against the keys of their signers and against the chain they
 * cover. Shared by the database and the bundle verifiers so both say the same thing.
 */
import type { ChainedEntry } from './chain.ts';
import { checkpointText, type Checkpoint } from './checkpoints.ts';
import { shortFingerprint, verifyText } from './keys.ts';

export interface SignerKey {
  name: string;
  role: string | null;
  fingerprint: string;
  publicKeyPem: string;
}

export interface CheckpointFinding {
  checkpoint: Checkpoint;
  /** Signature by a trusted signer's key, verified, over an entry of this chain. */
  signed: boolean;
  /** What no longer matches (a signature, a hash, the chain's end). */
  problems: string[];
  /** Why its signer cannot be relied on (an unregistered or unpinned key). */
  untrusted: string[];
}

/** Whose key signs for `name`, and whether that key is the one with fingerprint `fp`. */
export type KeyLookup = (name: string) => SignerKey | undefined;

/** The key to check a signature with, or why the signer is not one the verifier relies on. */
export type SignerJudge = (what: string, signer: string, signerKey: string) => { key?: SignerKey; problem?: string };

export function signerProblem(
  what: string,
  signer: string,
  signerKey: string,
  lookup: KeyLookup,
  keysWord: string,
): { key?: SignerKey; problem?: string } {
  const key = lookup(signer);
  if (key === undefined)
    return {
      problem: `${what} is signed by ${signer} (key ${shortFingerprint(signerKey)}), who is not among the ${keysWord}: signed with an unregistered key`,
    };
  if (key.fingerprint !== signerKey) {
    return {
      problem: `${what} names key ${shortFingerprint(signerKey)}, which is not ${signer}'s registered key ${shortFingerprint(key.fingerprint)}: signed with an unregistered key`,
    };
  }
  return { key };
}

export interface CheckpointOptions {
  judge: SignerJudge;
  /**
   * A key the bundle itself carries for a fingerprint, to tell an altered signature from an
   * untrusted one when the signer is not trusted. Diagnosis only: it never makes one count.
   */
  carried?: (fingerprint: string) => string | undefined;
}

export function checkCheckpoints(
  checkpoints: readonly Checkpoint[],
  bySeq: ReadonlyMap<number, ChainedEntry>,
  range: { firstSeq: number | null; lastSeq: number | null },
  options: CheckpointOptions,
): CheckpointFinding[] {
  return checkpoints.map((cp) => {
    const what = `checkpoint #${cp.id} (seq ${cp.seq}, signed by ${cp.signer} at ${cp.at})`;
    const problems: string[] = [];
    const untrusted: string[] = [];
    const { key, problem } = options.judge(what, cp.signer, cp.signerKey);
    if (problem) untrusted.push(problem);
    if (key && !verifyText(key.publicKeyPem, checkpointText(cp), cp.signature)) {
      problems.push(
        `${what}: the signature does not verify against ${cp.signer}'s key ${shortFingerprint(key.fingerprint)}: the checkpoint or its signature was altered or swapped`,
      );
    }
    const carried = key ? undefined : options.carried?.(cp.signerKey);
    if (carried !== undefined && !verifyText(carried, checkpointText(cp), cp.signature)) {
      problems.push(
        `${what}: the signature does not verify even against the key ${shortFingerprint(cp.signerKey)} it names: the checkpoint or its signature was altered`,
      );
    }
    const { firstSeq, lastSeq } = range;
    let placed = false;
    if (lastSeq === null || cp.seq > lastSeq) {
      const gap =
        lastSeq === null ? `every entry up to seq ${cp.seq}` : cp.seq === lastSeq + 1 ? `seq ${cp.seq}` : `seq ${lastSeq + 1}–${cp.seq}`;
      problems.push(
        `the audit log ends at ${lastSeq === null ? 'nothing' : `seq ${lastSeq}`}, but ${what} covers up to seq ${cp.seq}: ${gap} ${gap.includes('–') || gap.startsWith('every') ? 'were' : 'was'} removed from its end (truncated)`,
      );
    } else if (firstSeq !== null && cp.seq >= firstSeq) {
      const entry = bySeq.get(cp.seq);
      if (entry && entry.hash !== cp.hash) {
        problems.push(
          `entry seq ${cp.seq} hashes to ${entry.hash.slice(0, 12)}…, but ${what} signed ${cp.hash.slice(0, 12)}…: the log up to seq ${cp.seq} is not the one that was signed`,
        );
      }
      placed = entry !== undefined;
    }
    return { checkpoint: cp, signed: key !== undefined && placed && problems.length === 0 && untrusted.length === 0, problems, untrusted };
  });
}
