/** One partition's red flags in a table cell: a badge per question, the finding on hover and for screen readers. */
import type { PartitionFlag } from '../../shared/partitionFlags.ts';

export function PartitionFlags({ flags }: { flags: readonly PartitionFlag[] }) {
  if (flags.length === 0) return <span className="muted">–</span>;
  return (
    <span className="partition-flags" data-testid="partition-flags">
      {flags.map((f) => (
        <span
          key={f.code}
          className={`badge badge-${f.severity === 'block' ? 'danger' : 'warn'}`}
          title={`${f.detail}${f.accepted ? ` (${f.accepted})` : ''}`}
          aria-label={`${f.code}: ${f.detail}`}
        >
          {f.code}
          {f.accepted ? ' ✓' : ''}
        </span>
      ))}
    </span>
  );
}
