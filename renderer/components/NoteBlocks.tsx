/**
 * A run's story as its incident note tells it (shared/noteBlocks.ts): facts, sentences, tables,
 * people's words and the checklist. Charts are drawn by ChangeCharts from data, not from the
 * note's images.
 */
import type { Block, NoteSection } from '../../shared/noteBlocks.ts';

function BlockView({ block }: { block: Block }) {
  switch (block.kind) {
    case 'facts':
      return (
        <dl className="facts">
          {block.items.map(([k, v]) => (
            <div key={k} className="fact">
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
      );
    case 'text':
      return <p className={block.tone === 'bad' ? 'danger' : block.tone === 'ok' ? 'ok-text' : undefined}>{block.text}</p>;
    case 'table':
      return (
        <>
          {block.caption && <p className="caption">{block.caption}</p>}
          <table className="table compact">
            <thead>
              <tr>
                {block.table.header.map((h, i) => (
                  <th key={i}>{h}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {block.table.rows.map((r, i) => (
                <tr key={i}>
                  {r.map((c, j) => (
                    <td key={j} className={c === 'NO' || c === 'failed' ? 'danger' : undefined}>
                      {c}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      );
    case 'comment':
      return (
        <blockquote className="comment">
          <p className="who">
            <strong>{block.who}</strong> ({block.role}, {block.at})
          </p>
          <p className="words">{block.text}</p>
        </blockquote>
      );
    case 'chart':
      return null;
    case 'checklist':
      return (
        <ul className="reasons">
          {block.steps.map((s) => (
            <li key={s.step}>
              {s.state === 'done' ? '✔' : s.state === 'failed' ? '✘' : '○'} {s.step}
            </li>
          ))}
        </ul>
      );
  }
}

export function NoteSections({ sections }: { sections: readonly NoteSection[] }) {
  return (
    <>
      {sections.map((s) => (
        <section key={s.title} className="note-section" aria-label={s.title}>
          <h2>{s.title}</h2>
          {s.blocks.map((b, i) => (
            <BlockView key={i} block={b} />
          ))}
        </section>
      ))}
    </>
  );
}
