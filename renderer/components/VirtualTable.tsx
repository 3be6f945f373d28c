/**
 * A table that renders only the rows in view (@tanstack/react-virtual), so 5,000 partitions
 * or 10,000 runs scroll smoothly. Columns are a grid template shared by header and rows.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useRef, type ReactNode } from 'react';

export interface Column<R> {
  header: string;
  /** CSS grid track, e.g. '8rem' or 'minmax(10rem, 1fr)' */
  width: string;
  cell: (row: R, index: number) => ReactNode;
  align?: 'right';
}

export interface VirtualTableProps<R> {
  label: string;
  columns: Column<R>[];
  rows: readonly (R | undefined)[];
  rowKey: (row: R | undefined, index: number) => string;
  rowClass?: (row: R) => string;
  height?: number;
  rowHeight?: number;
  onRowClick?: (row: R) => void;
  onRange?: (first: number, last: number) => void;
}

export function VirtualTable<R>({
  label,
  columns,
  rows,
  rowKey,
  rowClass,
  height = 360,
  rowHeight = 30,
  onRowClick,
  onRange,
}: VirtualTableProps<R>) {
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => rowHeight,
    overscan: 12,
  });
  const template = columns.map((c) => c.width).join(' ');
  const items = virtualizer.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items.at(-1)?.index ?? 0;
  if (onRange && items.length > 0) queueMicrotask(() => onRange(first, last));
  return (
    <div className="vtable" role="table" aria-label={label} aria-rowcount={rows.length + 1}>
      <div className="vtable-head" role="row" style={{ gridTemplateColumns: template }}>
        {columns.map((c) => (
          <span key={c.header} role="columnheader" className={c.align === 'right' ? 'num' : undefined}>
            {c.header}
          </span>
        ))}
      </div>
      <div ref={scroller} className="vtable-body" style={{ maxHeight: height }} tabIndex={0} aria-label={`${label}, scrollable`}>
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {items.map((item) => {
            const row = rows[item.index];
            return (
              <div
                key={rowKey(row, item.index)}
                role="row"
                aria-rowindex={item.index + 2}
                className={`vtable-row${row && rowClass ? ` ${rowClass(row)}` : ''}${onRowClick ? ' clickable' : ''}`}
                style={{ gridTemplateColumns: template, height: rowHeight, transform: `translateY(${item.start}px)` }}
                onClick={row && onRowClick ? () => onRowClick(row) : undefined}
              >
                {row === undefined ? (
                  <span role="cell" className="muted">
                    loading…
                  </span>
                ) : (
                  columns.map((c) => (
                    <span key={c.header} role="cell" className={c.align === 'right' ? 'num' : undefined}>
                      {c.cell(row, item.index)}
                    </span>
                  ))
                )}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
