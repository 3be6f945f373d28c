/**
 * The partition grid, like a calendar: one square per partition, coloured by status (pending,
 * running, published, failed…). Rows are virtualised, so 5,000 partitions stay smooth. One tab
 * stop; arrow keys move between partitions and the line below says which one and how it went.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { PartitionCell, PartitionStatusName } from '../../shared/contractTypes.ts';
import { layoutCalendar, slotStatus, type CalendarUnit } from '../lib/calendar.ts';
import { int } from '../lib/format.ts';

export const STATUS_ORDER: PartitionStatusName[] = ['pending', 'running', 'validated', 'published', 'failed', 'skipped'];

export interface PartitionGridProps {
  unit: CalendarUnit;
  cells: readonly PartitionCell[];
  /** newer statuses from live events, by key */
  overlay?: Readonly<Record<string, PartitionStatusName>>;
  height?: number;
  label?: string;
  /** told which partition (its index in `cells`) the reader moved to or clicked, to open its evidence */
  onSelect?: (index: number) => void;
}

const ROW = 24;

export function PartitionGrid({ unit, cells, overlay = {}, height = 320, label = 'Partitions', onSelect }: PartitionGridProps) {
  const statuses = useMemo(() => cells.map((c) => overlay[c.key] ?? c.status), [cells, overlay]);
  const calendar = useMemo(
    () =>
      layoutCalendar(
        unit,
        cells.map((c) => c.key),
      ),
    [unit, cells],
  );
  const rowOf = useMemo(() => {
    const map = new Map<number, number>();
    calendar.rows.forEach((row, r) => row.slots.forEach((slot) => slot.forEach((i) => map.set(i, r))));
    return map;
  }, [calendar]);
  const counts = useMemo(() => {
    const c = Object.fromEntries(STATUS_ORDER.map((s) => [s, 0])) as Record<PartitionStatusName, number>;
    for (const s of statuses) c[s] += 1;
    return c;
  }, [statuses]);
  const [focus, setFocus] = useState(0);
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: calendar.rows.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => ROW,
    overscan: 8,
  });
  const width = calendar.columns.length;

  const move = (to: number) => {
    const next = Math.max(0, Math.min(cells.length - 1, to));
    setFocus(next);
    onSelect?.(next);
    virtualizer.scrollToIndex(rowOf.get(next) ?? 0);
  };
  const onKey = (e: KeyboardEvent) => {
    const jump = unit === 'day' ? 7 : width;
    const keys: Record<string, number> = {
      ArrowRight: focus + 1,
      ArrowLeft: focus - 1,
      ArrowDown: focus + jump,
      ArrowUp: focus - jump,
      Home: 0,
      End: cells.length - 1,
    };
    const to = keys[e.key];
    if (to !== undefined) {
      e.preventDefault();
      move(to);
    }
  };
  const focused = cells[focus];
  const focusedStatus = statuses[focus];

  return (
    <div className="pgrid">
      <div className="pgrid-legend" aria-label={`${label}: counts by status`}>
        {STATUS_ORDER.filter((s) => counts[s] > 0 || s === 'published' || s === 'pending').map((s) => (
          <span key={s} className="legend-item">
            <span className={`swatch s-${s}`} /> {s} <strong>{int(counts[s])}</strong>
          </span>
        ))}
      </div>
      <div className="pgrid-head" style={{ gridTemplateColumns: `7rem repeat(${width}, 1fr)` }} aria-hidden="true">
        <span />
        {calendar.columns.map((c) => (
          <span key={c}>{c}</span>
        ))}
      </div>
      <div
        ref={scroller}
        className="pgrid-body"
        style={{ maxHeight: height }}
        role="grid"
        aria-label={`${label}: ${cells.length} partitions; use the arrow keys to move`}
        aria-activedescendant={focused ? `cell-${focus}` : undefined}
        tabIndex={0}
        onKeyDown={onKey}
      >
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
          {virtualizer.getVirtualItems().map((item) => {
            const row = calendar.rows[item.index];
            if (!row) return null;
            return (
              <div
                key={row.label}
                role="row"
                className="pgrid-row"
                style={{ gridTemplateColumns: `7rem repeat(${width}, 1fr)`, transform: `translateY(${item.start}px)`, height: ROW }}
              >
                <span className="pgrid-label" role="rowheader">
                  {row.label}
                </span>
                {row.slots.map((slot, c) => {
                  if (slot.length === 0) return <span key={c} className="cell cell-empty" role="gridcell" aria-hidden="true" />;
                  const status = slotStatus(slot.map((i) => statuses[i] ?? 'pending'));
                  const i = slot[0] as number;
                  const names = slot.map((j) => cells[j]?.key).join(', ');
                  return (
                    <span
                      key={c}
                      id={`cell-${i}`}
                      role="gridcell"
                      aria-label={`${names} ${status}`}
                      title={`${names}: ${status}`}
                      data-status={status}
                      className={`cell s-${status}${slot.includes(focus) ? ' focused' : ''}`}
                      onClick={() => {
                        setFocus(i);
                        onSelect?.(i);
                      }}
                    />
                  );
                })}
              </div>
            );
          })}
        </div>
      </div>
      <p className="pgrid-detail" aria-live="polite">
        {focused ? (
          <>
            <strong>{focused.key}</strong> {focusedStatus}
            {focused.rows !== null ? ` · ${int(focused.rows)} rows` : ''}
            {focused.attempt > 1 ? ` · attempt ${focused.attempt}` : ''}
            {focused.error ? <span className="danger"> · {focused.error}</span> : null}
          </>
        ) : (
          'no partitions'
        )}
      </p>
    </div>
  );
}
