/**
 * Evidence bodies as tables, not JSON: an object is a two-column table, a list of objects a
 * table with a column per field, a list of values one line. Deep or long parts are cut with a
 * note saying how much; the raw JSON stays one click away.
 */
import type { ReactNode } from 'react';

const MAX_ROWS = 200;
const MAX_COLUMNS = 14;
/** Tables within tables this deep; deeper parts read as one line of `key value · key value`. */
const MAX_DEPTH = 2;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function scalar(v: unknown): string {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** A deep part in one line: `added 1 · removed 0 · sample 2 items`. */
function line(value: unknown): string {
  if (Array.isArray(value))
    return value.every((v) => !isObject(v) && !Array.isArray(v)) ? value.map(scalar).join(', ') : `${value.length} items`;
  if (isObject(value))
    return Object.entries(value)
      .map(
        ([k, v]) =>
          `${k} ${isObject(v) ? '{…}' : Array.isArray(v) ? (v.every((x) => !isObject(x) && !Array.isArray(x)) ? v.map(scalar).join(', ') : `${v.length} items`) : scalar(v)}`,
      )
      .join(' · ');
  return scalar(value);
}

function Value({ value, depth }: { value: unknown; depth: number }): ReactNode {
  if (Array.isArray(value)) {
    if (value.length === 0) return <span className="muted">none</span>;
    if (value.every(isObject) && depth < MAX_DEPTH) return <ObjectList rows={value} depth={depth + 1} />;
  }
  if (isObject(value) && depth < MAX_DEPTH) return <ObjectTable value={value} depth={depth + 1} />;
  const text = line(value);
  return text.length > 400 ? `${text.slice(0, 400)}… (${text.length} characters)` : text;
}

function ObjectTable({ value, depth }: { value: Record<string, unknown>; depth: number }) {
  const entries = Object.entries(value);
  return (
    <table className="table compact json-table">
      <tbody>
        {entries.map(([k, v]) => (
          <tr key={k}>
            <th scope="row">{k}</th>
            <td>
              <Value value={v} depth={depth} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ObjectList({ rows, depth }: { rows: Record<string, unknown>[]; depth: number }) {
  // Plain values first (partition, status, counts), nested parts after them.
  const all = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const nested = (c: string) => rows.some((r) => isObject(r[c]) || Array.isArray(r[c]));
  const columns = [...all.filter((c) => !nested(c)), ...all.filter(nested)];
  const shown = columns.slice(0, MAX_COLUMNS);
  return (
    <>
      <table className="table compact json-table">
        <thead>
          <tr>
            {shown.map((c) => (
              <th key={c}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.slice(0, MAX_ROWS).map((r, i) => (
            <tr key={i}>
              {shown.map((c) => (
                <td key={c}>
                  <Value value={r[c]} depth={depth} />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {(rows.length > MAX_ROWS || columns.length > shown.length) && (
        <p className="muted small">
          {rows.length > MAX_ROWS ? `${rows.length - MAX_ROWS} more rows` : ''}
          {rows.length > MAX_ROWS && columns.length > shown.length ? '; ' : ''}
          {columns.length > shown.length
            ? `${columns.length - shown.length} more columns (${columns.slice(MAX_COLUMNS).join(', ')})`
            : ''}{' '}
          — in the raw JSON below
        </p>
      )}
    </>
  );
}

export function JsonTables({ value }: { value: unknown }) {
  return (
    <div className="json-tables">
      <Value value={value} depth={0} />
      <details className="raw-json">
        <summary>Raw JSON</summary>
        <pre className="json">{JSON.stringify(value, null, 2)}</pre>
      </details>
    </div>
  );
}
