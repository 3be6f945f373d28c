/**
 * The note's "Impact scope and red flags" section, from the bundle alone: the dry run's impact
 * graph (a static picture in HTML, what it shows in words in Markdown, every node with its reason), the
 * dry run's questions per partition with the ETA, what the run did on purpose that a flag would
 * have refused (accept_purged, overwrite_closed, acknowledgements), and the canary's comparison.
 */
import type { CanaryBody } from '../../../../shared/canary.ts';
import { describeImpact, type ImpactGraph } from '../../../../shared/impact.ts';
import { KIND_WORD } from '../../../../shared/impactLayout.ts';
import { describeKeyChange } from '../../../../shared/keyChange.ts';
import type { PartitionFlag } from '../../../../shared/partitionFlags.ts';
import type { RedFlag } from '../../../../shared/redFlags.ts';
import { humanDuration, type RunEstimate } from '../../../../shared/runEstimate.ts';
import type { BundleEvidence, NoteBundle } from '../bundle.ts';
import type { Block, NoteSection, Table } from './blocks.ts';
import { impactSvg } from './impactPicture.ts';

export const IMPACT_SECTION = 'Impact scope and red flags';

export interface ImpactSection {
  /** one paragraph: what reads the target, and when the dry run said the run would end */
  summary: string;
  graph: ImpactGraph | null;
  nodes: Table;
  flags: Table;
  accepted: string[];
  canary: { summary: string; table: Table } | null;
}

interface DryBody {
  impact?: ImpactGraph;
  flags?: PartitionFlag[];
  redFlags?: RedFlag[];
  estimate?: RunEstimate | null;
}

const parse = <T>(e: BundleEvidence | undefined): T | undefined => {
  if (!e) return undefined;
  try {
    return JSON.parse(e.bodyJson) as T;
  } catch {
    return undefined;
  }
};

const last = (bundle: NoteBundle, kind: string) => [...bundle.evidence].reverse().find((e) => e.kind === kind);

export function impactFacts(bundle: NoteBundle): ImpactSection {
  const dryEvidence = last(bundle, 'dry-run');
  const dry = parse<DryBody>(dryEvidence) ?? {};
  const graph = dry.impact ?? null;
  const estimate = dry.estimate;
  const summary = !dryEvidence
    ? 'No dry run on record: the impact scope was never measured.'
    : [
        graph
          ? `Derived from the catalog and the workspace by dry run #${dryEvidence.id}: ${describeImpact(graph)}.`
          : `Dry run #${dryEvidence.id} predates the derived impact scope.`,
        estimate
          ? `ETA at the dry run: about ${humanDuration(estimate.ms)}${estimate.entersWindowAt ? `, reaching the no-run window at ${estimate.entersWindowAt}` : ''}.`
          : '',
        ...(graph?.problems ?? []).map((p) => `Not looked at: ${p}.`),
      ]
        .filter(Boolean)
        .join(' ');
  const flags: Table = {
    header: ['partition', 'question', 'severity', 'what was found'],
    rows: [
      ...(dry.flags ?? []).map((f) => [
        f.key,
        f.code,
        f.accepted ? `${f.severity} (accepted)` : f.severity,
        `${f.detail}${f.accepted ? ` — ${f.accepted}` : ''}`,
      ]),
      ...(dry.redFlags ?? []).filter((f) => !f.partitions).map((f) => ['(the run)', f.code, f.severity, f.message]),
    ],
  };
  const accepted = bundle.evidence
    .filter((e) => e.kind === 'accepted-flags')
    .flatMap((e) => {
      const body = parse<{ flags?: PartitionFlag[]; deleted?: string[] }>(e) ?? {};
      return [
        ...((body.deleted ?? []).length > 0
          ? [`Evidence #${e.id}: deleted on purpose, their source being gone (accept_purged): ${(body.deleted ?? []).join(', ')}.`]
          : []),
        ...(body.flags ?? [])
          .filter((f) => f.code !== 'source-gone')
          .map((f) => `Evidence #${e.id}: ${f.key} ${f.code} — ${f.accepted ?? ''}.`),
      ];
    });
  return {
    summary,
    graph,
    nodes: {
      header: ['affected', 'what it is', 'why', 'after the run'],
      rows: (graph?.nodes ?? []).map((n) => [
        n.label,
        `${KIND_WORD[n.kind]}: ${n.what}${n.declared ? ' (declared)' : ''}`,
        n.reason,
        n.stale ? 'STALE: refresh or rerun' : '–',
      ]),
    },
    flags,
    accepted,
    canary: canaryPart(bundle),
  };
}

function canaryPart(bundle: NoteBundle): ImpactSection['canary'] {
  const e = last(bundle, 'canary');
  const body = parse<CanaryBody>(e);
  if (!e || !body) return null;
  const rows = (m: CanaryBody['partitions'][number]['before']) => (m ? String(m.rows ?? m.records ?? '–') : '–');
  return {
    summary: `Canary evidence #${e.id} at ${e.createdAt}: the first ${body.size} partition(s) written, reconciled with the source and compared with what they held before.`,
    table: {
      header: ['partition', 'compared with', 'rows before → after', 'by key'],
      rows: body.partitions.map((p) => [p.key, p.basis, `${rows(p.before)} → ${rows(p.after)}`, p.keys ? describeKeyChange(p.keys) : '–']),
    },
  };
}

/** The section as the note's blocks: the summary, the picture, every affected object, the questions, what was meant, the canary. */
export function impactBlocks(s: ImpactSection): Block[] {
  return [
    { kind: 'text', text: s.summary },
    ...(s.graph
      ? [
          {
            kind: 'chart' as const,
            title: 'Impact of the backfill',
            svg: impactSvg(s.graph),
            alt: `${describeImpact(s.graph)}; dashed: stale after the run until refreshed or rerun`,
          },
          { kind: 'table' as const, table: s.nodes, caption: 'Every affected object, and why' },
        ]
      : []),
    { kind: 'table', table: s.flags, caption: "The dry run's questions" },
    ...s.accepted.map((text): Block => ({ kind: 'text', text })),
    ...(s.canary
      ? [
          { kind: 'text' as const, text: s.canary.summary },
          { kind: 'table' as const, table: s.canary.table, caption: 'Canary' },
        ]
      : []),
  ];
}

export function impactSection(bundle: NoteBundle): NoteSection {
  return { title: IMPACT_SECTION, blocks: impactBlocks(impactFacts(bundle)) };
}
