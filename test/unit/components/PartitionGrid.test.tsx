// @vitest-environment happy-dom
/**
 * The partition grid: laid out like a calendar, coloured by status, counts per status, only
 * the rows in view rendered (5,000 partitions stay smooth), and reachable by keyboard.
 */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PartitionCell, PartitionStatusName } from '../../../shared/contractTypes.ts';
import { PartitionGrid } from '../../../renderer/components/PartitionGrid.tsx';
import { layoutCalendar, slotStatus } from '../../../renderer/lib/calendar.ts';

afterEach(cleanup);

// happy-dom lays nothing out: give every element the size a 300-pixel viewport would have, as
// the virtualiser reads it (client and offset sizes).
const sizes = { clientHeight: 300, clientWidth: 800, offsetHeight: 300, offsetWidth: 800 };
const saved = Object.fromEntries(Object.keys(sizes).map((k) => [k, Object.getOwnPropertyDescriptor(HTMLElement.prototype, k)]));
beforeAll(() => {
  for (const [k, v] of Object.entries(sizes)) Object.defineProperty(HTMLElement.prototype, k, { configurable: true, get: () => v });
});
afterAll(() => {
  for (const [k, d] of Object.entries(saved)) if (d) Object.defineProperty(HTMLElement.prototype, k, d);
});

const cell = (key: string, status: PartitionStatusName, extra: Partial<PartitionCell> = {}): PartitionCell => ({
  key,
  status,
  rows: null,
  attempt: 0,
  error: null,
  sourceCount: null,
  targetCount: null,
  ...extra,
});

function days(from: string, n: number): string[] {
  const start = Date.parse(`${from}T00:00:00Z`);
  return Array.from({ length: n }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
}

describe('layoutCalendar', () => {
  it.each([
    // 2026-05-01 is a Friday: the first week row starts on Monday 2026-04-27
    {
      unit: 'day' as const,
      keys: days('2026-05-01', 4),
      columns: 7,
      rows: [
        ['2026-04-27', [[], [], [], [], [0], [1], [2]]],
        ['2026-05-04', [[3], [], [], [], [], [], []]],
      ],
    },
    {
      unit: 'month' as const,
      keys: ['2025-11', '2025-12', '2026-01'],
      columns: 12,
      rows: [
        ['2025', [[], [], [], [], [], [], [], [], [], [], [0], [1]]],
        ['2026', [[2], [], [], [], [], [], [], [], [], [], [], []]],
      ],
    },
  ])('$unit partitions', ({ unit, keys, columns, rows }) => {
    const cal = layoutCalendar(unit, keys);
    expect(cal.columns).toHaveLength(columns);
    expect(cal.rows.map((r) => [r.label, r.slots])).toEqual(rows);
  });

  it('hourly partitions: a day per row, and a repeated fall-back hour shares its slot', () => {
    const cal = layoutCalendar('hour', ['2026-11-01T00', '2026-11-01T01', '2026-11-01T01+1', '2026-11-01T02']);
    expect(cal.rows).toHaveLength(1);
    expect(cal.rows[0]?.slots.slice(0, 3)).toEqual([[0], [1, 2], [3]]);
  });

  it.each<[PartitionStatusName[], PartitionStatusName]>([
    [['published', 'failed'], 'failed'],
    [['published', 'running'], 'running'],
    [['published', 'published'], 'published'],
    [['pending', 'published'], 'pending'],
  ])('a shared slot shows the most urgent of %j: %s', (statuses, shown) => {
    expect(slotStatus(statuses)).toBe(shown);
  });
});

describe('<PartitionGrid>', () => {
  it('5,000 daily partitions: counts by status, and only the rows in view are rendered', () => {
    const keys = days('2020-01-01', 5000);
    const statuses: PartitionStatusName[] = ['published', 'published', 'failed', 'pending', 'running'];
    render(<PartitionGrid unit="day" cells={keys.map((k, i) => cell(k, statuses[i % 5] as PartitionStatusName))} height={300} />);
    const legend = screen.getByLabelText('Partitions: counts by status').textContent;
    expect(legend).toContain('pending 1,000');
    expect(legend).toContain('running 1,000');
    expect(legend).toContain('published 2,000');
    expect(legend).toContain('failed 1,000');
    const rendered = screen.getAllByRole('row').length;
    expect(rendered).toBeGreaterThan(0);
    expect(rendered).toBeLessThan(60); // of 715 week rows
  });

  it('live events recolour a partition without refetching', () => {
    const cells = days('2026-05-01', 3).map((k) => cell(k, 'pending'));
    const { rerender } = render(<PartitionGrid unit="day" cells={cells} />);
    expect(screen.getByRole('gridcell', { name: '2026-05-02 pending' })).toBeTruthy();
    rerender(<PartitionGrid unit="day" cells={cells} overlay={{ '2026-05-02': 'running' }} />);
    expect(screen.getByRole('gridcell', { name: '2026-05-02 running' }).getAttribute('data-status')).toBe('running');
  });

  it('is one tab stop; arrow keys move between partitions and say how each went', () => {
    const cells = [
      cell('2026-05-01', 'published', { rows: 120 }),
      cell('2026-05-02', 'failed', { attempt: 2, error: 'validation failed: rows 10 vs 9' }),
      cell('2026-05-03', 'pending'),
    ];
    render(<PartitionGrid unit="day" cells={cells} />);
    const grid = screen.getByRole('grid');
    expect(grid.getAttribute('tabindex')).toBe('0');
    const detail = () => document.querySelector('.pgrid-detail')?.textContent;
    expect(detail()).toBe('2026-05-01 published · 120 rows');
    fireEvent.keyDown(grid, { key: 'ArrowRight' });
    expect(detail()).toBe('2026-05-02 failed · attempt 2 · validation failed: rows 10 vs 9');
    fireEvent.keyDown(grid, { key: 'End' });
    expect(detail()).toBe('2026-05-03 pending');
    fireEvent.keyDown(grid, { key: 'Home' });
    expect(grid.getAttribute('aria-activedescendant')).toBe('cell-0');
  });
});
