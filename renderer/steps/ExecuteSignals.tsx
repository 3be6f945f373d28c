/**
 * The Execute step's view of the throttle: the banner that says why the run waits, the
 * "Throttled" figure, and the chart of the watched signals (one at a time, chosen here).
 */
import { lazy, Suspense, useState } from 'react';
import { describeReading, formatSignalValue, throttleReason, type ThrottleState } from '../../shared/signals.ts';
import { duration } from '../lib/format.ts';
import type { RunLive } from '../store/liveSlice.ts';

// ECharts is half a megabyte: loaded when a run first has a signal to draw, not with the app.
const SignalChart = lazy(() => import('../components/SignalChart.tsx').then((m) => ({ default: m.SignalChart })));

export function ThrottleBanner({ state, now }: { state: ThrottleState; now: number }) {
  const since = duration((now - Date.parse(state.since)) / 1000);
  return (
    <p className="banner banner-warn" role="status" data-testid="throttle-state">
      {state.settling
        ? `Throttled for ${since}, settling: every signal is back under its level (it was ${throttleReason(state.over)}); the next partition starts once they have stayed there for the settle time.`
        : `Throttled for ${since}: ${throttleReason(state.over)}. The partition in flight finishes; no new one starts until the signal settles under its level. The run continues by itself.`}
    </p>
  );
}

/** `2 time(s), 14 s` over this session's episodes. */
export function throttledSummary(episodes: readonly [number, number | null][], now: number): string {
  if (episodes.length === 0) return 'no';
  const ms = episodes.reduce((n, [from, to]) => n + ((to ?? now) - from), 0);
  return `${episodes.length} time(s), ${duration(ms / 1000)}`;
}

/** `running`: the run is executing here, so time goes on; afterwards the chart ends at its last reading. */
export function SignalPanel({ live, now, running }: { live: RunLive; now: number; running: boolean }) {
  const ids = Object.keys(live.signals);
  // The signal that throttles now is shown first; otherwise the first watched.
  const throttling = live.stats?.throttle?.over[0]?.signal;
  const [chosen, choose] = useState<string | null>(null);
  const id = chosen !== null && ids.includes(chosen) ? chosen : (throttling ?? ids[0]);
  const series = id ? live.signals[id] : undefined;
  if (!series) return null;
  const last = series.points.at(-1);
  const end = running ? now : Math.max(last?.[0] ?? now, live.published.at(-1)?.[0] ?? 0);
  const reading = { ...series, value: last?.[1] ?? null };
  const levels = [
    series.max !== undefined ? `throttle above ${formatSignalValue(series.max, series.unit)}` : null,
    series.critical !== undefined ? `halt above ${formatSignalValue(series.critical, series.unit)}` : null,
  ].filter(Boolean);
  return (
    <section className="signals" aria-label="Watched signals">
      <div className="signals-head">
        <h3>Watched signals</h3>
        {ids.length > 1 && (
          <label>
            Signal{' '}
            <select value={id} onChange={(e) => choose(e.target.value)}>
              {ids.map((s) => (
                <option key={s} value={s}>
                  {live.signals[s]?.label ?? s}
                </option>
              ))}
            </select>
          </label>
        )}
        <span className="muted" data-testid="signal-now">
          now {describeReading(reading)}
          {levels.length > 0 ? ` · ${levels.join(', ')}` : ''}
        </span>
      </div>
      <Suspense fallback={<div className="signal-chart muted">Loading the chart…</div>}>
        <SignalChart
          series={series}
          published={live.published}
          episodes={live.episodes}
          now={end}
          label={`${series.label} over time against its levels (${levels.join(', ') || 'none'}), with rows per minute; throttled ${throttledSummary(live.episodes, now)}`}
        />
      </Suspense>
    </section>
  );
}
