/**
 * The incident note's "Impact scope and red flags" section, from a bundle alone: the graph as a
 * static SVG in HTML (every node drawn, stale ones dashed, names escaped), a tree in Markdown,
 * the questions per partition, what was accepted on purpose, and the canary's comparison.
 */
import { describe, expect, it } from 'vitest';
import type { CanaryBody } from '../../shared/canary.ts';
import { ImpactBuilder } from '../../shared/impact.ts';
import type { PartitionFlag } from '../../shared/partitionFlags.ts';
import type { BundleEvidence, NoteBundle } from '../../electron/engine/evidence/bundle.ts';
import { impactFacts, impactSection } from '../../electron/engine/evidence/note/impactSection.ts';
import { renderHtml } from '../../electron/engine/evidence/note/html.ts';
import { renderMarkdown } from '../../electron/engine/evidence/note/markdown.ts';
import { impactSvg } from '../../electron/engine/evidence/note/impactPicture.ts';

function graph() {
  const g = new ImpactBuilder();
  g.node({ id: 'target', kind: 'target', label: 'mart.daily', what: 'the target table', reason: 'recomputed', found: 'catalog' });
  g.node({
    id: 'mv',
    kind: 'materialized-view',
    label: 'mart.mv_<monthly>',
    what: 'materialized view',
    reason: 'reads the target',
    found: 'catalog',
  });
  g.node({
    id: 'job',
    kind: 'job',
    label: 'weekly-rollup',
    what: 'job',
    reason: 'reads mart.daily',
    found: 'workspace',
    job: { name: 'weekly-rollup', target: 't', unit: 'day' },
  });
  g.edge('target', 'mv', 'read by');
  g.edge('target', 'job', 'read by job');
  g.declare('dashboard.x', 'target');
  return g.build();
}

const evidence = (id: number, kind: string, body: unknown): BundleEvidence => ({
  id,
  runId: 'bf-1',
  planHash: 'p',
  kind,
  createdAt: `2026-12-01T00:00:0${id}.000Z`,
  bodyJson: JSON.stringify(body),
  bodySha256: 'x'.repeat(64),
});

const flags: PartitionFlag[] = [
  {
    key: '2026-05-03',
    code: 'source-gone',
    severity: 'warn',
    detail: 'the source has no rows for it',
    accepted: "listed in the plan's accept_purged",
  },
  { key: '2026-05-04', code: 'abnormal-size', severity: 'block', detail: 'predicted 900 rows where its neighbours predict about 100' },
];
const canary: CanaryBody = {
  runId: 'bf-1',
  size: 1,
  reconciled: true,
  partitions: [{ key: '2026-05-01', basis: 'dry run', before: { rows: 10 }, after: { rows: 12 } }],
};

const bundle = {
  runId: 'bf-1',
  evidence: [
    evidence(1, 'dry-run', { impact: graph(), flags, redFlags: [], estimate: { ms: 7_260_000, entersWindowAt: null } }),
    evidence(2, 'accepted-flags', { flags: [flags[0]], deleted: ['2026-05-03'] }),
    evidence(3, 'canary', canary),
  ],
} as unknown as NoteBundle;

/** A note holding only this section, as the renderers print it. */
const note = (b: NoteBundle) => ({ title: 't', subtitle: 's', verdict: 'v', sections: [impactSection(b)] });

describe("the note's impact section", () => {
  it('draws every node in a static SVG, stale ones dashed, labels escaped', () => {
    const svg = impactSvg(graph());
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    for (const label of ['mart.daily', 'mart.mv_&lt;monthly&gt;', 'weekly-rollup', 'dashboard.x'])
      expect(svg).toContain(`>${label}</text>`);
    expect(svg).not.toContain('<monthly>');
    expect(svg.match(/stroke-dasharray/g)?.length).toBe(3); // materialized view, job, declared
    expect(svg.match(/marker-end="url\(#impact-arrow\)"/g)?.length).toBe(3); // three edges, each with its arrow
    expect(svg).not.toMatch(/<script|href=|url\((?!#impact-arrow)/);
  });

  it('says what reads the target, the questions per partition, what was accepted, and the canary', () => {
    const s = impactFacts(bundle);
    expect(s.summary).toBe(
      'Derived from the catalog and the workspace by dry run #1: 1 materialized view, 1 downstream job, 1 declared only; 3 stale after the run. ETA at the dry run: about 2h 01m.',
    );
    expect(s.flags.rows).toEqual([
      ['2026-05-03', 'source-gone', 'warn (accepted)', "the source has no rows for it — listed in the plan's accept_purged"],
      ['2026-05-04', 'abnormal-size', 'block', 'predicted 900 rows where its neighbours predict about 100'],
    ]);
    expect(s.accepted).toEqual(['Evidence #2: deleted on purpose, their source being gone (accept_purged): 2026-05-03.']);
    expect(s.canary?.table.rows).toEqual([['2026-05-01', 'dry run', '10 → 12', '–']]);
    const html = renderHtml(note(bundle));
    expect(html).toContain('<h2>Impact scope and red flags</h2>');
    expect(html).toMatch(/<figure class="chart" role="img" aria-label="1 materialized view[^"]*"><svg/);
    const md = renderMarkdown(note(bundle));
    expect(md).toContain('## Impact scope and red flags');
    expect(md).toContain('mart.mv_<monthly>');
    expect(md).toContain('Evidence #2: deleted on purpose');
  });

  it('a run without a dry run says so, and draws nothing', () => {
    const none = { runId: 'bf-2', evidence: [] } as unknown as NoteBundle;
    const s = impactFacts(none);
    expect(s.summary).toBe('No dry run on record: the impact scope was never measured.');
    expect(s.graph).toBeNull();
    expect(renderHtml(note(none))).not.toContain('<svg');
  });
});
