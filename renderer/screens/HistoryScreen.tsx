/**
 * Past runs: search by job, request id, status and date. Pages of 200 are fetched as they
 * scroll into view and rows are virtualised, so 10,000 runs stay smooth. Reads SQLite only:
 * it works with every network unplugged.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { RunSummary } from '../../shared/contractTypes.ts';
import { call } from '../api.ts';
import { RunStatus, TierBadge } from '../components/StatusBadge.tsx';
import { VirtualTable } from '../components/VirtualTable.tsx';
import { useCall } from '../hooks/useCall.ts';
import { int, when } from '../lib/format.ts';
import { useApp } from '../store/index.ts';

const PAGE = 200;
const STATUSES = ['planned', 'running', 'paused', 'halted', 'canary', 'abandoned', 'failed', 'succeeded'] as const;

interface Filters {
  search: string;
  job: string;
  status: string;
  from: string;
  to: string;
}

export function HistoryScreen() {
  const [filters, setFilters] = useState<Filters>({ search: '', job: '', status: '', from: '', to: '' });
  const [pages, setPages] = useState<Map<number, RunSummary[]>>(new Map());
  const [total, setTotal] = useState<number | null>(null);
  const loading = useRef(new Set<number>());
  const generation = useRef(0);
  const jobs = useCall('jobs:list', {}, 'List the jobs');
  const go = useApp((s) => s.go);

  const query = useMemo(
    () => ({
      ...(filters.search.trim() ? { search: filters.search.trim() } : {}),
      ...(filters.job ? { job: filters.job } : {}),
      ...(filters.status ? { status: filters.status as (typeof STATUSES)[number] } : {}),
      ...(/^\d{4}-\d{2}-\d{2}$/.test(filters.from) ? { from: filters.from } : {}),
      ...(/^\d{4}-\d{2}-\d{2}$/.test(filters.to) ? { to: filters.to } : {}),
    }),
    [filters],
  );

  const fetchPage = useCallback(
    (page: number) => {
      if (loading.current.has(page)) return;
      loading.current.add(page);
      const mine = generation.current;
      void call('history:list', { ...query, limit: PAGE, offset: page * PAGE }).then((r) => {
        if (mine !== generation.current) return; // the filters changed meanwhile
        if (!r.ok) return useApp.getState().pushError('Search the history', r.error);
        setTotal(r.value.total);
        setPages((p) => new Map(p).set(page, r.value.runs));
      });
    },
    [query],
  );

  useEffect(() => {
    generation.current += 1;
    loading.current = new Set();
    setPages(new Map());
    setTotal(null);
    const timer = setTimeout(() => fetchPage(0), 150); // typing settles first
    return () => clearTimeout(timer);
  }, [fetchPage]);

  const rows = useMemo(() => {
    const out: (RunSummary | undefined)[] = new Array<RunSummary | undefined>(total ?? 0);
    for (const [page, runs] of pages) runs.forEach((r, i) => (out[page * PAGE + i] = r));
    return out;
  }, [pages, total]);

  const onRange = useCallback(
    (first: number, last: number) => {
      for (let p = Math.floor(first / PAGE); p <= Math.floor(last / PAGE); p++) if (!pages.has(p)) fetchPage(p);
    },
    [pages, fetchPage],
  );

  const set = (patch: Partial<Filters>) => setFilters((f) => ({ ...f, ...patch }));
  return (
    <div className="card history">
      <h1>History</h1>
      <form className="filters" role="search" aria-label="Search runs" onSubmit={(e) => e.preventDefault()}>
        <div className="field grow">
          <label htmlFor="h-search">Search (request id, job, person, halt reason)</label>
          <input
            id="h-search"
            type="search"
            value={filters.search}
            onChange={(e) => set({ search: e.target.value })}
            placeholder="bf-2026-06"
          />
        </div>
        <div className="field">
          <label htmlFor="h-job">Job</label>
          <select id="h-job" value={filters.job} onChange={(e) => set({ job: e.target.value })}>
            <option value="">any</option>
            {jobs.data?.jobs.map((j) => (
              <option key={j.name}>{j.name}</option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="h-status">Status</label>
          <select id="h-status" value={filters.status} onChange={(e) => set({ status: e.target.value })}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="h-from">Created from</label>
          <input id="h-from" type="date" value={filters.from} onChange={(e) => set({ from: e.target.value })} />
        </div>
        <div className="field">
          <label htmlFor="h-to">to (inclusive)</label>
          <input id="h-to" type="date" value={filters.to} onChange={(e) => set({ to: e.target.value })} />
        </div>
      </form>
      <p className="muted" aria-live="polite" data-testid="history-count">
        {total === null ? 'Searching…' : `${int(total)} run(s)`}
      </p>
      <VirtualTable<RunSummary>
        label="Runs"
        rows={rows}
        height={560}
        rowKey={(r, i) => r?.runId ?? `row-${i}`}
        onRange={onRange}
        rowClass={(r) => (r.status === 'failed' || r.status === 'halted' ? 'row-warn' : '')}
        columns={[
          {
            header: 'Request id',
            width: 'minmax(14rem, 1.3fr)',
            cell: (r) => (
              <button type="button" className="link mono" onClick={() => go({ name: 'run', runId: r.runId })}>
                {r.runId}
              </button>
            ),
          },
          { header: 'Job', width: 'minmax(10rem, 1fr)', cell: (r) => r.jobName },
          { header: 'Status', width: '7rem', cell: (r) => <RunStatus status={r.status} /> },
          { header: 'Tier', width: '6.5rem', cell: (r) => <TierBadge tier={r.tier} /> },
          { header: 'Range', width: '15rem', cell: (r) => `${r.rangeFrom ?? '–'} → ${r.rangeTo ?? '–'}` },
          { header: 'Partitions', width: '7rem', align: 'right', cell: (r) => `${int(r.partitionsPublished)}/${int(r.partitionsTotal)}` },
          { header: 'Created', width: '11rem', cell: (r) => when(r.createdAt).slice(0, 16) },
        ]}
      />
    </div>
  );
}
