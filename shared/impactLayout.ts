/**
 * Where each node of an impact graph goes: dagre's layered layout, left to right (what the
 * target reads → the target → what reads it). One layout for the app's interactive graph and
 * the incident note's static picture, so a lead sees the same shape in both.
 */
import * as dagre from '@dagrejs/dagre';
import type { ImpactEdge, ImpactGraph, ImpactNode } from './impact.ts';

export const NODE_WIDTH = 230;
export const NODE_HEIGHT = 58;

export interface PlacedNode extends ImpactNode {
  /** top-left corner */
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface PlacedEdge extends ImpactEdge {
  points: { x: number; y: number }[];
}

export interface ImpactLayout {
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  width: number;
  height: number;
}

/** The part of dagre's graph the layout uses. */
interface LayoutGraph {
  setGraph(label: { rankdir: string; nodesep: number; ranksep: number; marginx: number; marginy: number }): void;
  setDefaultEdgeLabel(label: () => object): void;
  setNode(id: string, label: { width: number; height: number }): void;
  setEdge(from: string, to: string): void;
  node(id: string): { x: number; y: number } | undefined;
  edge(from: string, to: string): { points?: { x: number; y: number }[] } | undefined;
  graph(): { width?: number; height?: number };
}

/**
 * **Hazard**: dagre's type declarations import their own files without extensions, which the
 * engine's NodeNext resolution cannot follow (the renderer's bundler resolution can): under
 * NodeNext its types collapse to `any`. They are pinned here to what this module uses.
 */
const { Graph, layout } = dagre as unknown as {
  Graph: new (options: { multigraph: boolean }) => LayoutGraph;
  layout: (g: LayoutGraph) => void;
};

export function layoutImpact(graph: ImpactGraph): ImpactLayout {
  const g = new Graph({ multigraph: false });
  g.setGraph({ rankdir: 'LR', nodesep: 18, ranksep: 70, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of graph.nodes) g.setNode(n.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  const ids = new Set(graph.nodes.map((n) => n.id));
  for (const e of graph.edges) if (ids.has(e.from) && ids.has(e.to)) g.setEdge(e.from, e.to);
  layout(g);
  const nodes = graph.nodes.map((n) => {
    const at = g.node(n.id);
    return { ...n, x: (at?.x ?? 0) - NODE_WIDTH / 2, y: (at?.y ?? 0) - NODE_HEIGHT / 2, width: NODE_WIDTH, height: NODE_HEIGHT };
  });
  const edges = graph.edges
    .filter((e) => ids.has(e.from) && ids.has(e.to))
    .map((e) => ({
      ...e,
      points: (g.edge(e.from, e.to)?.points ?? []).map((p) => ({ x: p.x, y: p.y })),
    }));
  const label = g.graph();
  return { nodes, edges, width: Math.ceil(label.width ?? 0), height: Math.ceil(label.height ?? 0) };
}

/** The words a node's kind goes by, on the picture and in the app. */
export const KIND_WORD: Record<ImpactNode['kind'], string> = {
  source: 'source',
  target: 'target',
  view: 'view',
  'materialized-view': 'materialized view',
  partition: 'partition',
  parent: 'parent table',
  references: 'references',
  'referenced-by': 'referenced by',
  trigger: 'trigger',
  publication: 'publication',
  job: 'downstream job',
  declared: 'declared',
};
