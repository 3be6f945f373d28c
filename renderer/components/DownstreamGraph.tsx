/** The tables the job declares downstream of its target, as a small graph: source → target → each downstream. */
export function DownstreamGraph({ source, target, downstream }: { source: string; target: string; downstream: readonly string[] }) {
  const rowH = 34;
  const W = 230;
  const height = Math.max(1, downstream.length) * rowH + 16;
  const midY = height / 2;
  const box = (x: number, y: number, text: string, tone: string) => (
    <g key={`${x}-${y}-${text}`}>
      <rect x={x} y={y - 13} width={W} height={26} rx={6} className={`node node-${tone}`} />
      <text x={x + W / 2} y={y + 4} textAnchor="middle" className="node-text">
        {text.length > 34 ? `${text.slice(0, 33)}…` : text}
      </text>
    </g>
  );
  return (
    <figure className="graph">
      <svg
        role="img"
        aria-label={`${source} feeds ${target}${downstream.length ? `, which feeds ${downstream.join(', ')}` : ', with nothing declared downstream'}`}
        viewBox={`0 0 760 ${height}`}
        width="100%"
        height={height}
      >
        <line x1={5 + W} y1={midY} x2={265} y2={midY} className="edge" markerEnd="url(#arrow)" />
        {downstream.map((_, i) => (
          <line key={i} x1={265 + W} y1={midY} x2={525} y2={8 + rowH / 2 + i * rowH} className="edge" markerEnd="url(#arrow)" />
        ))}
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" className="arrowhead" />
          </marker>
        </defs>
        {box(5, midY, source, 'source')}
        {box(265, midY, target, 'target')}
        {downstream.length === 0
          ? box(525, midY, 'nothing declared', 'none')
          : downstream.map((d, i) => box(525, 8 + rowH / 2 + i * rowH, d, 'downstream'))}
      </svg>
      <figcaption className="muted">
        {downstream.length === 0
          ? 'The job declares nothing downstream of its target.'
          : `Downstream of the target, and recomputed from it: ${downstream.join(', ')}. Tell their owners when this backfill lands.`}
      </figcaption>
    </figure>
  );
}
