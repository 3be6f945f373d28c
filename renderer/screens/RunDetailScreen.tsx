/** One past run: its timeline (the audit log), its evidence and its partition grid. Reads SQLite only. */
import { useState } from 'react';
import type { RunDetail, TimelineEntry } from '../../shared/contractTypes.ts';
import { EvidenceViewer } from '../components/EvidenceViewer.tsx';
import { PartitionGrid } from '../components/PartitionGrid.tsx';
import { RunStatus, TierBadge } from '../components/StatusBadge.tsx';
import { VirtualTable } from '../components/VirtualTable.tsx';
import { useCall } from '../hooks/useCall.ts';
import type { CalendarUnit } from '../lib/calendar.ts';
import { int, when } from '../lib/format.ts';
import { useApp } from '../store/index.ts';

type Tab = 'timeline' | 'evidence' | 'partitions';

export function RunDetailScreen({ runId }: { runId: string }) {
  const { data } = useCall('history:get', { runId }, `Open run ${runId}`, runId);
  const [tab, setTab] = useState<Tab>('timeline');
  const go = useApp((s) => s.go);
  if (!data) return <p className="muted">Loading run {runId}…</p>;
  const run = data.run;
  return (
    <div className="run-detail">
      <header className="card run-header">
        <div>
          <h1>
            Run <span className="mono">{run.runId}</span> <RunStatus status={run.status} /> <TierBadge tier={run.tier} />
          </h1>
          <p>
            <strong>{run.jobName}</strong> · {run.rangeFrom} → {run.rangeTo} ({run.unit}) · {int(run.partitionsPublished)}/
            {int(run.partitionsTotal)} published, {int(run.partitionsFailed)} failed · {int(run.rowsWritten)} rows
          </p>
          <p className="muted">
            Created {when(run.createdAt)} · started {when(run.startedAt)} · finished {when(run.finishedAt)} · executed by{' '}
            {run.executedBy ?? '–'}
            {run.haltReason ? ` · ${run.haltReason}` : ''}
          </p>
        </div>
        <button type="button" className="primary" onClick={() => go({ name: 'runbook', runId, step: null })}>
          Open the runbook
        </button>
      </header>
      <div className="card">
        <div className="tabs inner" role="tablist" aria-label="Run details">
          {(['timeline', 'evidence', 'partitions'] as Tab[]).map((t) => (
            <button
              key={t}
              type="button"
              role="tab"
              aria-selected={tab === t}
              className={`tab${tab === t ? ' active' : ''}`}
              onClick={() => setTab(t)}
            >
              {t === 'timeline'
                ? `Timeline (${data.timeline.length})`
                : t === 'evidence'
                  ? `Evidence (${data.evidence.length})`
                  : `Partitions (${data.partitions.length})`}
            </button>
          ))}
        </div>
        <div role="tabpanel">{body(tab, data)}</div>
      </div>
    </div>
  );
}

function body(tab: Tab, data: RunDetail) {
  switch (tab) {
    case 'timeline':
      return (
        <VirtualTable<TimelineEntry>
          label="Timeline"
          rows={data.timeline}
          height={520}
          rowKey={(r, i) => String(r?.seq ?? i)}
          columns={[
            { header: '#', width: '4rem', align: 'right', cell: (r) => r.seq },
            { header: 'When', width: '11rem', cell: (r) => when(r.at).slice(0, 19) },
            { header: 'Event', width: '13rem', cell: (r) => <span className="mono">{r.event}</span> },
            {
              header: 'What',
              width: '14rem',
              cell: (r) => `${r.entity} ${r.entity === 'plan' ? `${r.entityId.slice(0, 12)}…` : r.entityId}`,
            },
            {
              header: 'Change',
              width: '11rem',
              cell: (r) => (r.fromStatus || r.toStatus ? `${r.fromStatus ?? '–'} → ${r.toStatus ?? '–'}` : ''),
            },
            { header: 'Who', width: '10rem', cell: (r) => r.actor },
            {
              header: 'Detail',
              width: 'minmax(12rem, 1fr)',
              cell: (r) => (
                <span className="muted small" title={r.detail}>
                  {r.detail}
                </span>
              ),
            },
          ]}
        />
      );
    case 'evidence':
      return <EvidenceList data={data} />;
    case 'partitions':
      return (
        <PartitionGrid
          unit={(data.run.unit ?? 'day') as CalendarUnit}
          cells={data.partitions}
          height={480}
          label="Partitions of this run"
        />
      );
  }
}

function EvidenceList({ data }: { data: RunDetail }) {
  const [open, setOpen] = useState<number | null>(null);
  return (
    <>
      <table className="table" aria-label="Evidence">
        <thead>
          <tr>
            <th>#</th>
            <th>Kind</th>
            <th>Captured</th>
            <th>sha256</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {data.evidence.map((e) => (
            <tr key={e.id}>
              <td>{e.id}</td>
              <td>{e.kind}</td>
              <td>{when(e.createdAt)}</td>
              <td className="mono small">{e.bodySha256.slice(0, 24)}…</td>
              <td>
                <button type="button" className="link" onClick={() => setOpen(e.id)}>
                  Open
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {open !== null && <EvidenceViewer id={open} onClose={() => setOpen(null)} />}
    </>
  );
}
