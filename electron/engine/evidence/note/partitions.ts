/**
 * "Partitions" and "Reconciliation", exceptions first: a failed, retried or disagreeing
 * partition in full at the top, the uniform rest in one summary row per kind — 61 partitions
 * published on their first attempt are one line, not 61.
 */
import type { NoteBundle } from '../bundle.ts';
import { exceptionsFirst, keysSpan, span, str, type NoteSection } from './blocks.ts';
import type { NoteFacts } from './facts.ts';

type Obj = Record<string, unknown>;
const num = (v: unknown): number | null => (typeof v === 'number' ? v : v === null || v === undefined || v === '' ? null : Number(v));

export function partitionsSection(bundle: NoteBundle): NoteSection {
  const rows = bundle.partitions as Obj[];
  const exception = (p: Obj) => p.status !== 'published' || Number(p.attempt ?? 1) > 1 || (p.error !== null && p.error !== undefined);
  const table = exceptionsFirst(
    rows,
    exception,
    (p) => [
      str(p.key),
      str(p.status),
      str(p.attempt),
      str(p.rowsWritten),
      str(p.sourceCount),
      str(p.targetCount),
      str(p.durationMs),
      str(p.checksum).slice(0, 20),
      str(p.error),
    ],
    (p) => `${str(p.status)}:${str(p.attempt)}`,
    (g) => [
      keysSpan(g.map((p) => str(p.key))),
      str(g[0]?.status),
      str(g[0]?.attempt),
      span(g.map((p) => num(p.rowsWritten))),
      span(g.map((p) => num(p.sourceCount))),
      span(g.map((p) => num(p.targetCount))),
      span(g.map((p) => num(p.durationMs))),
      'each its own',
      '–',
    ],
  );
  return {
    title: 'Partitions',
    blocks: [
      {
        kind: 'text',
        text:
          rows.length === 0
            ? 'No partitions on record.'
            : `${table.exceptions === 0 ? 'No exceptions' : `${table.exceptions} exception${table.exceptions === 1 ? '' : 's'} (failed, retried or not published) first`}; ${table.summarised} uniform partition${table.summarised === 1 ? '' : 's'} summarised by status and attempt.`,
        tone: table.exceptions > 0 ? 'bad' : 'ok',
      },
      {
        kind: 'table',
        table: {
          header: ['partition', 'status', 'attempt', 'rows', 'source rows', 'target rows', 'ms', 'checksum', 'error'],
          rows: table.rows,
        },
      },
    ],
  };
}

export function reconciliationSection(f: NoteFacts): NoteSection {
  const recon = f.reconciliation;
  if (!recon)
    return {
      title: 'Reconciliation',
      blocks: [{ kind: 'text', text: 'No reconciliation on record: completion was not verified.', tone: 'bad' }],
    };
  const rows = (recon.body.partitions as Obj[] | undefined) ?? [];
  const ratio = (r: Obj) => Math.max(0, ...((r.checks as Obj[] | undefined) ?? []).map((c) => Number(c.diffRatio ?? 0)));
  const table = exceptionsFirst(
    rows,
    (r) => r.ok !== true || ratio(r) > 0,
    (r) => [
      str((r.partition as Obj | undefined)?.key),
      r.ok ? 'yes' : 'NO',
      str(r.targetCount),
      str(r.markedRows),
      String(ratio(r)),
      ((r.problems as string[] | undefined) ?? []).join('; ') || '–',
    ],
    () => 'agrees',
    (g) => [
      keysSpan(g.map((r) => str((r.partition as Obj | undefined)?.key))),
      'yes',
      span(g.map((r) => num(r.targetCount))),
      span(g.map((r) => num(r.markedRows))),
      '0',
      '–',
    ],
  );
  const e = recon.evidence;
  return {
    title: 'Reconciliation',
    blocks: [
      {
        kind: 'text',
        text: `Evidence #${e.id} at ${e.createdAt} (sha256 ${e.bodySha256.slice(0, 16)}…): ${recon.body.ok ? 'source and target agree for every published partition' : 'source and target DO NOT agree'}${table.exceptions > 0 ? `; ${table.exceptions} partition${table.exceptions === 1 ? '' : 's'} first` : ''}.`,
        tone: recon.body.ok ? 'ok' : 'bad',
      },
      {
        kind: 'table',
        table: { header: ['partition', 'agrees', 'target rows', 'published rows', 'max diff ratio', 'problems'], rows: table.rows },
      },
    ],
  };
}
