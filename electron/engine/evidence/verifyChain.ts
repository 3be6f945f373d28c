/**
 * Walks an audit chain (database rows or a bundle's slice) and reports the FIRST place it
 * breaks, precisely: an edited entry, a deleted one, a reordered pair, a broken link. Later
 * entries are not judged: once the chain is broken, everything after it is unproven anyway.
 */
import { entryHash, GENESIS_HASH, type ChainedEntry } from './chain.ts';

export type ChainBreakKind = 'edited' | 'hash-altered' | 'deleted' | 'reordered' | 'unlinked' | 'unchained';

export interface ChainBreak {
  kind: ChainBreakKind;
  /** The first seq that is wrong. */
  seq: number;
  message: string;
}

export interface ChainReport {
  count: number;
  firstSeq: number | null;
  head: { seq: number; hash: string } | null;
  broken: ChainBreak | null;
}

export interface VerifyChainOptions {
  /** True for a whole database (the first entry must be seq 1 after the genesis hash); false for a slice. */
  fromGenesis: boolean;
  /** Names the edited field of an entry when something else (a bundle's manifest) can tell. */
  explainEdit?: (entry: ChainedEntry) => string | undefined;
  /**
   * Seqs a run's segment leaves out on purpose (other runs' entries, as its note.exported entry
   * declares): a gap made only of them is no deletion, and the entry after it links to an entry
   * that is not there, so its prevHash is not judged. Any other gap is a deletion.
   */
  leftOut?: (seq: number) => boolean;
}

const short = (hash: string | null | undefined) => (hash ? `${hash.slice(0, 12)}…` : 'none');
const label = (e: ChainedEntry) => `seq ${e.seq} (${e.event}, ${e.at})`;

export function verifyChain(entries: readonly ChainedEntry[], options: VerifyChainOptions): ChainReport {
  const report = (broken: ChainBreak | null): ChainReport => {
    const last = entries.at(-1);
    return { count: entries.length, firstSeq: entries[0]?.seq ?? null, head: last ? { seq: last.seq, hash: last.hash } : null, broken };
  };
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as ChainedEntry;
    const prev = entries[i - 1];
    const next = entries[i + 1];
    if (!e.hash || !e.prevHash) {
      return report({
        kind: 'unchained',
        seq: e.seq,
        message: `entry ${label(e)} carries no hash: it was written around the audit repository`,
      });
    }
    if (prev && e.seq < prev.seq) {
      const pair =
        e.seq === prev.seq - 1 ? `entries seq ${e.seq} and ${prev.seq} were swapped` : `entry seq ${e.seq} was moved after seq ${prev.seq}`;
      return report({ kind: 'reordered', seq: e.seq, message: `${pair}: the log lists ${label(prev)} before ${label(e)}` });
    }
    if (prev && e.seq === prev.seq) {
      return report({ kind: 'edited', seq: e.seq, message: `seq ${e.seq} appears twice` });
    }
    const expectedSeq = prev ? prev.seq + 1 : options.fromGenesis ? 1 : e.seq;
    const declaredGap = prev !== undefined && e.seq > expectedSeq && allLeftOut(expectedSeq, e.seq - 1, options.leftOut);
    if (e.seq !== expectedSeq && !declaredGap && entries.slice(i + 1).some((x) => x.seq === expectedSeq)) {
      const message =
        next?.seq === expectedSeq && e.seq === expectedSeq + 1
          ? `entries seq ${expectedSeq} and ${e.seq} were swapped: the log lists ${label(e)} before ${label(next)}`
          : `entry seq ${expectedSeq} was moved: the log lists ${label(e)} where seq ${expectedSeq} belongs`;
      return report({ kind: 'reordered', seq: expectedSeq, message });
    }
    if (e.seq !== expectedSeq && !declaredGap) {
      // Of a gap, only the seqs the segment does not leave out on purpose are missing.
      const missing = seqsIn(expectedSeq, e.seq - 1).filter((seq) => !options.leftOut?.(seq));
      const [low, high] = [missing[0] ?? expectedSeq, missing.at(-1) ?? e.seq - 1];
      const gap =
        missing.length === 1
          ? `seq ${low} is`
          : missing.length === high - low + 1
            ? `seq ${low}–${high} are`
            : `seqs ${missing.join(', ')} are`;
      return report({
        kind: 'deleted',
        seq: low,
        message: `entry ${gap} missing (deleted): the log goes from ${prev ? label(prev) : 'its start'} to ${label(e)}`,
      });
    }
    if (entryHash(e.prevHash, e) !== e.hash) {
      if (next && swappedPair(e, next)) {
        return report({
          kind: 'reordered',
          seq: e.seq,
          message: `entries seq ${e.seq} and ${next.seq} were swapped: each holds the other's content (${e.event} / ${next.event})`,
        });
      }
      if (next && entryHash(e.prevHash, e) === next.prevHash) {
        return report({
          kind: 'hash-altered',
          seq: e.seq,
          message: `entry ${label(e)} had its stored hash altered to ${short(e.hash)} (its content still matches the link from seq ${next.seq})`,
        });
      }
      const field = options.explainEdit?.(e);
      return report({
        kind: 'edited',
        seq: e.seq,
        message: `entry ${label(e)} was changed after it was written: its content no longer matches its hash ${short(e.hash)}${field ? ` (${field})` : ''}`,
      });
    }
    const expectedPrev = declaredGap ? e.prevHash : prev ? prev.hash : options.fromGenesis ? GENESIS_HASH : e.prevHash;
    if (e.prevHash !== expectedPrev) {
      return report({
        kind: 'unlinked',
        seq: e.seq,
        message: `entry ${label(e)} does not follow ${prev ? `seq ${prev.seq}` : 'the genesis'}: it records prev_hash ${short(e.prevHash)} but ${prev ? `seq ${prev.seq} hashes to` : 'the genesis is'} ${short(expectedPrev)}`,
      });
    }
  }
  return report(null);
}

/** Two neighbours whose contents were exchanged while their seq slots stayed (a database reorder). */
function swappedPair(a: ChainedEntry, b: ChainedEntry): boolean {
  return entryHash(a.prevHash, { ...a, seq: b.seq }) === a.hash && entryHash(b.prevHash, { ...b, seq: a.seq }) === b.hash;
}

function allLeftOut(from: number, to: number, leftOut: ((seq: number) => boolean) | undefined): boolean {
  if (!leftOut) return false;
  for (let seq = from; seq <= to; seq++) if (!leftOut(seq)) return false;
  return true;
}

function seqsIn(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}
