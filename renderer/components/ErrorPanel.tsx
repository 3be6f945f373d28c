/** The one place every engine error is shown: what went wrong, while doing what, and what to do next. */
import { useApp } from '../store/index.ts';

export function ErrorPanel() {
  const errors = useApp((s) => s.errors);
  const dismiss = useApp((s) => s.dismissError);
  if (errors.length === 0) return null;
  return (
    <section className="error-panel" role="alert" aria-label="Errors">
      {errors.map((e) => (
        <article key={e.id} className="error-item">
          <header>
            <strong>{e.doing} failed</strong>
            <span className="tag">{e.code}</span>
            <button type="button" className="link" onClick={() => dismiss(e.id)} aria-label={`Dismiss error: ${e.message}`}>
              Dismiss
            </button>
          </header>
          <p className="error-message">{e.message}</p>
          {e.reasons && e.reasons.length > 0 && (
            <ul className="reasons">
              {e.reasons.map((r) => (
                <li key={r}>{r}</li>
              ))}
            </ul>
          )}
          {e.hint && <p className="hint">What to do: {e.hint}</p>}
        </article>
      ))}
    </section>
  );
}
