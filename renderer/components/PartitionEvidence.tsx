/** One partition's evidence, opened from the grid: rows, checksum, attempts, timings, errors, its change by key and reconciliation. */
import type { PartitionCell, PartitionEvidenceView } from '../../shared/contractTypes.ts';
import type { KeyChange } from '../../shared/keyChange.ts';
import { int, when } from '../lib/format.ts';

const counts = (k: KeyChange | null) =>
  k ? `${k.added} added, ${k.removed} removed, ${k.changed} changed, ${k.unchanged} unchanged` : '–';

export function PartitionEvidence({ cell, evidence }: { cell: PartitionCell; evidence: PartitionEvidenceView | undefined }) {
  const r = evidence?.reconciliation;
  const rows: [string, string][] = [
    ['Status', cell.status],
    ['Rows written', int(cell.rows)],
    ['Source / target counts', `${int(cell.sourceCount)} / ${int(cell.targetCount)}`],
    ['Checksum', cell.checksum ?? '–'],
    ['Attempts', String(cell.attempt)],
    ['Started', when(cell.startedAt)],
    ['Finished', when(cell.finishedAt)],
    ['Took', cell.durationMs === null || cell.durationMs === undefined ? '–' : `${int(cell.durationMs)} ms`],
    ['Error', cell.error ?? '–'],
    ['Keys, predicted', counts(evidence?.predicted ?? null)],
    ['Keys, after the run', counts(evidence?.actual ?? null)],
    [
      'Reconciliation',
      r
        ? `${r.ok ? 'agrees' : 'DOES NOT agree'}: ${int(r.targetCount)} rows, ${int(r.markedRows)} published${r.problems.length ? ` — ${r.problems.join('; ')}` : ''}`
        : '–',
    ],
  ];
  return (
    <div className="partition-evidence card" data-testid="partition-evidence">
      <h3>Partition {cell.key}</h3>
      <table className="table compact" aria-label={`Evidence of partition ${cell.key}`}>
        <tbody>
          {rows.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td
                className={
                  (k === 'Error' && v !== '–') || v.startsWith('DOES NOT') ? 'danger' : k === 'Checksum' ? 'mono small' : undefined
                }
              >
                {v}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
