/**
 * One past run. It opens on a summary: the story its incident note tells (who asked, signed,
 * executed, closed, and why), what changed by key with the charts, the people's comments, who to
 * notify, and the partition grid whose cells open their evidence. Then the timeline as sentences
 * (each entry's raw JSON behind a disclosure) and the evidence as tables. Reads SQLite only.
 */
import { useState } from 'react';
import type { RunDetail, TimelineEntry } from '../../shared/contractTypes.ts';
import { rawEntry, timelineSentence } from '../../shared/timelineSentence.ts';
import { ChangeCharts } from '../components/ChangeCharts.tsx';
import { EvidenceViewer } from '../components/EvidenceViewer.tsx';
import { NoteSections } from '../components/NoteBlocks.tsx';
import { PartitionEvidence } from '../components/PartitionEvidence.tsx';
import { PartitionGrid } from '../components/PartitionGrid.tsx';
import { RunStatus, TierBadge } from '../components/StatusBadge.tsx';
import { useCall } from '../hooks/useCall.ts';
import type { CalendarUnit } from '../lib/calendar.ts';
import { int, when } from '../lib/format.ts';
import { useApp } from '../store/index.ts';

type Tab = 'summary' | 'timeline' | 'evidence';

export function RunDetailScreen({ runId }: { runId: string }) {
  const { data } = useCall('history:get', { runId }, `Open run ${runId}`, runId);
  const [tab, setTab] = useState<Tab>('summary');
  const go = useApp((s) => s.go);
  if (!data) return <p className="muted">Loading run {runId}…</p>;
  const run = data.run;
  const labels: Record<Tab, string> = {
    summary: 'Summary',
    timeline: `Timeline (${data.timeline.length})`,
    evidence: `Evidence (${data.evidence.length})`,
  };
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
        <button type="button" onClick={() => go({ name: 'runbook', runId, step: null })}>
          Open the runbook
        </button>
      </header>
      <div className="card">
        <div className="tabs inner" role="tablist" aria-label="Run details">
          {(['summary', 'timeline', 'evidence'] as Tab[]).map((t) => (
            <button
              key={t}
              type="button"
              role="tab"
              aria-selected={tab === t}
              className={`tab${tab === t ? ' active' : ''}`}
              onClick={() => setTab(t)}
            >
              {labels[t]}
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
    case 'summary':
      return <Summary data={data} />;
    case 'timeline':
      return <Timeline entries={data.timeline} />;
    case 'evidence':
      return <EvidenceList data={data} />;
  }
}

function Summary({ data }: { data: RunDetail }) {
  const { data: story } = useCall('history:story', { runId: data.run.runId }, `Read the story of ${data.run.runId}`, data.run.runId);
  const [open, setOpen] = useState<number | null>(null);
  const cell = open === null ? undefined : data.partitions[open];
  if (!story) return <p className="muted">Reading the run's story…</p>;
  const [first, change, ...rest] = story.sections;
  return (
    <div className="run-summary" data-testid="run-summary">
      <NoteSections sections={first ? [first] : []} />
      {change && <NoteSections sections={[change]} />}
      <ChangeCharts rows={story.chartRows} />
      <NoteSections sections={rest} />
      <section className="note-section" aria-label="Partitions">
        <h2>Partitions</h2>
        <p className="muted">Open a partition to see its evidence: rows, checksum, attempts, timings, errors, its change by key.</p>
        <PartitionGrid
          unit={(data.run.unit ?? 'day') as CalendarUnit}
          cells={data.partitions}
          height={320}
          label="Partitions of this run"
          onSelect={setOpen}
        />
        {cell && <PartitionEvidence cell={cell} evidence={story.partitions.find((p) => p.key === cell.key)} />}
      </section>
    </div>
  );
}

function Timeline({ entries }: { entries: readonly TimelineEntry[] }) {
  return (
    <ol className="timeline" aria-label="Timeline">
      {entries.map((e) => {
        const s = timelineSentence(e);
        return (
          <li key={e.seq} className={`timeline-${s.tone}`}>
            <span className="timeline-at mono small">{when(e.at)}</span> <span className="timeline-text">{s.text}</span>{' '}
            <span className="muted small">— {e.actor}</span>
            <RawEntry entry={e} />
          </li>
        );
      })}
    </ol>
  );
}

/** One entry's raw JSON, rendered when opened: a long history does not stringify every entry up front. */
function RawEntry({ entry }: { entry: TimelineEntry }) {
  const [open, setOpen] = useState(false);
  return (
    <details className="raw-json" onToggle={(ev) => setOpen(ev.currentTarget.open)}>
      <summary>Raw entry #{entry.seq}</summary>
      {open && <pre className="json">{rawEntry(entry)}</pre>}
    </details>
  );
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
