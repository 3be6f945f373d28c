/**
 * The change by key, read like a table diff: how many keys the run adds, removes and changes,
 * which columns change, the sums before and after with what moved between keys (totals can stay
 * while keys move), the largest movers per label column, and changed keys before → after.
 */
import type { ReactNode } from 'react';
import { isZeroDecimal } from '../../shared/decimal.ts';
import { describeKeyChange, keysTouched, type KeyChangeTotals } from '../../shared/keyChange.ts';
import { int, measure } from '../lib/format.ts';

const signedText = (v: string | undefined) =>
  v === undefined ? '–' : v.startsWith('-') || isZeroDecimal(v) ? measure(v) : `+${measure(v)}`;

function Table({ label, head, rows, testId }: { label: string; head: string[]; rows: ReactNode[][]; testId?: string }) {
  return (
    <table className="table compact" aria-label={label} data-testid={testId}>
      <thead>
        <tr>
          {head.map((h) => (
            <th key={h}>{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r, i) => (
          <tr key={i}>
            {r.map((c, j) => (
              <td key={j} className={j > 0 && typeof c === 'string' && /^[+\-–\d]/.test(c) ? 'num' : undefined}>
                {c}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export interface ChangeByKeyProps {
  totals: KeyChangeTotals;
  /** "predicted by the dry run", "after the run" */
  what: string;
  /** the other side to compare counts with (the prediction, beside the change after the run) */
  predicted?: KeyChangeTotals | null;
  /** show the sample and movers (off in the compact restatement on the sign-off screen) */
  detail?: boolean;
}

export function ChangeByKey({ totals, what, predicted, detail = true }: ChangeByKeyProps) {
  const touched = keysTouched(totals);
  const valueColumns = totals.columns.filter((c) => !totals.grain.includes(c));
  const moverColumns = [...new Set(totals.movers.map((m) => m.column))];
  return (
    <div className="change-by-key" data-testid="change-by-key">
      <p className={`change-headline ${touched > 0 ? 'changes' : 'no-changes'}`} data-testid="change-headline">
        <strong>{touched > 0 ? `${int(touched)} keys change` : 'No key changes'}</strong> {what}: {describeKeyChange(totals)}
        {totals.grainFrom ? ` (grain from ${totals.grainFrom})` : ''}, in {int(totals.partitionsChanged)} of {int(totals.partitions)}{' '}
        partitions.
      </p>
      <Table
        label="Keys added, removed and changed"
        testId="change-counts"
        head={['', 'rows', 'added', 'removed', 'changed', 'unchanged']}
        rows={[
          ...(predicted
            ? [
                [
                  'predicted',
                  `${int(predicted.before)} → ${int(predicted.after)}`,
                  int(predicted.added),
                  int(predicted.removed),
                  int(predicted.changed),
                  int(predicted.unchanged),
                ],
              ]
            : []),
          [
            what,
            `${int(totals.before)} → ${int(totals.after)}`,
            int(totals.added),
            int(totals.removed),
            int(totals.changed),
            int(totals.unchanged),
          ],
        ]}
      />
      {totals.measures.length > 0 && (
        <Table
          label="Sums before and after"
          testId="change-sums"
          head={['measure', 'before', 'after', 'net', 'moved between keys']}
          rows={totals.measures.map((m) => [m.column, measure(m.before), measure(m.after), signedText(m.net), measure(m.moved)])}
        />
      )}
      {valueColumns.length > 0 && (
        <p className="muted small" data-testid="change-columns">
          Columns changed (keys on both sides): {valueColumns.map((c) => `${c} ${int(totals.columnChanges[c] ?? 0)}`).join(' · ')}
        </p>
      )}
      {detail &&
        moverColumns.map((column) => {
          const movers = totals.movers.filter((m) => m.column === column).slice(0, 10);
          const names = totals.measures.map((m) => m.column);
          return (
            <Table
              key={column}
              label={`Moved by ${column}`}
              testId="change-movers"
              head={[`by ${column}`, 'keys', ...names.map((n) => `${n} net`)]}
              rows={movers.map((m) => [m.value ?? 'NULL', int(m.keys), ...names.map((n) => signedText(m.net[n]))])}
            />
          );
        })}
      {detail && totals.sample.length > 0 && (
        <details open className="change-sample">
          <summary>
            Changed keys, before → after ({totals.sample.length} of {int(touched)})
          </summary>
          <Table
            label="Changed keys, before and after"
            testId="change-sample"
            head={['partition', 'change', `key (${totals.grain.join(', ')})`, ...valueColumns]}
            rows={totals.sample.map((s) => [
              s.partition,
              <span key="k" className={`kind kind-${s.kind}`}>
                {s.kind}
              </span>,
              s.key.map((k) => k ?? 'NULL').join(', '),
              ...valueColumns.map((c) => {
                const i = totals.columns.indexOf(c);
                // As the database has them: an id is not a number to format.
                const [b, a] = [s.before?.[i] ?? 'NULL', s.after?.[i] ?? 'NULL'];
                if (s.kind === 'added') return `– → ${a}`;
                if (s.kind === 'removed') return `${b} → –`;
                return b === a ? b : `${b} → ${a}`;
              }),
            ])}
          />
        </details>
      )}
    </div>
  );
}
