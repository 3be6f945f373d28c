/**
 * The impact scope as a graph a lead can judge without context (source article 001): what the
 * job reads → the target → everything that reads it, fires on it or is declared downstream,
 * laid out by dagre (shared/impactLayout.ts, the same layout as the note's picture) and drawn
 * with React Flow (pan, fit, select). Every node says what it is; selecting one says why it is
 * affected; stale ones are dashed. The list under it says all of it again, for reading and print.
 */
import { Background, Controls, Handle, MarkerType, Position, ReactFlow, type Edge, type Node, type NodeProps } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo, useState } from 'react';
import { describeImpact, type ImpactGraph as Graph, type ImpactNode } from '../../shared/impact.ts';
import { KIND_WORD, layoutImpact } from '../../shared/impactLayout.ts';

type ImpactFlowNode = Node<{ node: ImpactNode }, 'impact'>;

function ImpactNodeView({ data, selected }: NodeProps<ImpactFlowNode>) {
  const n = data.node;
  return (
    <div
      className={`impact-node impact-${n.kind}${n.stale ? ' impact-stale' : ''}${selected ? ' impact-selected' : ''}`}
      title={`${n.what}: ${n.reason}`}
      data-testid="impact-node"
      data-kind={n.kind}
    >
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <strong className="impact-label">{n.label}</strong>
      <span className="impact-kind">
        {KIND_WORD[n.kind]}
        {n.stale && <span className="impact-tag stale"> · stale after the run</span>}
        {n.declared && n.kind !== 'declared' && <span className="impact-tag"> · declared</span>}
      </span>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}

const NODE_TYPES = { impact: ImpactNodeView };

export function ImpactGraph({ graph, caption }: { graph: Graph; caption?: string }) {
  // **Important**: React Flow forgets a node's measured size whenever it is handed a new node
  // object, and hides the node until it has measured it again. A refetch of the same dry run
  // (any SQLite change re-reads the runbook) and every re-render of the step would otherwise
  // hide the graph until it is measured again, for longer on a busy machine. So the layout is
  // keyed by the graph's content, and the nodes and edges change only with it or the selection.
  const content = JSON.stringify(graph);
  const laid = useMemo(() => layoutImpact(graph), [content]);
  const [selected, setSelected] = useState<string | null>(null);
  const unselected = useMemo<ImpactFlowNode[]>(
    () =>
      laid.nodes.map((n) => ({
        id: n.id,
        type: 'impact',
        position: { x: n.x, y: n.y },
        data: { node: n },
        draggable: false,
        connectable: false,
        style: { width: n.width, height: n.height },
      })),
    [laid],
  );
  // Selecting a node hands React Flow a new object for that node only.
  const nodes = useMemo(() => unselected.map((n) => (n.id === selected ? { ...n, selected: true } : n)), [unselected, selected]);
  // No labels on the canvas: where many edges fan out of the target they pile up; the list
  // under the graph says each relation in words.
  const edges = useMemo<Edge[]>(
    () =>
      laid.edges.map((e) => ({
        id: `${e.from}→${e.to}`,
        source: e.from,
        target: e.to,
        ariaLabel: e.label,
        type: 'default',
        markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
        className: 'impact-edge',
      })),
    [laid],
  );
  const chosen = graph.nodes.find((n) => n.id === selected) ?? null;
  const height = Math.min(560, Math.max(220, laid.height + 40));
  return (
    <figure className="impact-figure" data-testid="impact-graph">
      <div className="impact-canvas" style={{ height }}>
        <ReactFlow
          nodes={nodes}
          edges={edges}
          nodeTypes={NODE_TYPES}
          fitView
          fitViewOptions={{ padding: 0.08 }}
          minZoom={0.2}
          maxZoom={1.6}
          nodesDraggable={false}
          nodesConnectable={false}
          zoomOnScroll={false}
          preventScrolling={false}
          onNodeClick={(_, n) => setSelected(n.id)}
          onPaneClick={() => setSelected(null)}
          aria-label={`Impact graph: ${describeImpact(graph)}`}
        >
          <Background gap={24} size={1} />
          <Controls showInteractive={false} />
        </ReactFlow>
      </div>
      <figcaption>
        {caption ?? describeImpact(graph)}. Dashed: stale once the run lands, until refreshed or rerun.{' '}
        {chosen ? (
          <span data-testid="impact-why">
            <strong>{chosen.label}</strong> — {chosen.what}: {chosen.reason}
          </span>
        ) : (
          <span className="muted">Select a node to see why it is affected.</span>
        )}
      </figcaption>
      <ImpactList graph={graph} />
      {graph.problems.length > 0 && (
        <ul className="reasons warn-text">
          {graph.problems.map((p) => (
            <li key={p}>Not looked at: {p}</li>
          ))}
        </ul>
      )}
    </figure>
  );
}

/** Every affected object with what it is and why: the graph's content as text. */
function ImpactList({ graph }: { graph: Graph }) {
  const shown = graph.nodes.filter((n) => n.kind !== 'target');
  return (
    <details className="impact-list" open={shown.length <= 14}>
      <summary>Every affected object ({shown.length}) and why</summary>
      <table>
        <thead>
          <tr>
            <th>Object</th>
            <th>What it is</th>
            <th>Why it is affected</th>
            <th>After the run</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((n) => (
            <tr key={n.id} className={n.stale ? 'row-changed' : undefined}>
              <td className="mono">{n.label}</td>
              <td>
                {KIND_WORD[n.kind]}
                {n.declared && n.kind !== 'declared' ? ' (declared)' : ''}
              </td>
              <td>{n.reason}</td>
              <td>{n.stale ? 'stale: refresh or rerun' : '–'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
