/**
 * Posting one notification: a few attempts with backoff on what may pass (no answer, a refused
 * connection, 429, 5xx), none on what will not (another 4xx: a wrong URL or token). It never
 * throws: the outcome is data, for the log and the audit trail. `signal` abandons it.
 */
import { backoffDelay, sleep } from '../executor/retry.ts';
import { fetchFailure } from '../safety/probes/httpProbe.ts';

export interface DeliveryOptions {
  attempts?: number;
  timeoutMs?: number;
  baseDelayMs?: number;
  signal?: AbortSignal;
}

const GIVEN_UP = 'given up (the run ended)';
/** The last failure, and that the end of the run stopped the retries. */
const givenUp = (last: string): string => (last.endsWith(GIVEN_UP) ? last : `${last}; ${GIVEN_UP}`);

export type Delivery = { ok: true; attempts: number; status: number } | { ok: false; attempts: number; error: string };

export async function deliver(url: string, body: unknown, headers: Record<string, string>, o: DeliveryOptions = {}): Promise<Delivery> {
  const attempts = o.attempts ?? 3;
  const timeoutMs = o.timeoutMs ?? 3_000;
  let error = 'not sent';
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (o.signal?.aborted) return { ok: false, attempts: attempt - 1, error: attempt === 1 ? GIVEN_UP : givenUp(error) };
    let retryAfterMs = 0;
    try {
      const signal = o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal,
        redirect: 'error',
      });
      const text = await response.text().catch(() => '');
      if (response.ok) return { ok: true, attempts: attempt, status: response.status };
      error = `HTTP ${response.status}${text ? ` ${JSON.stringify(text.slice(0, 120))}` : ''}`;
      if (response.status !== 429 && response.status < 500) return { ok: false, attempts: attempt, error };
      retryAfterMs = Math.min(5_000, Number(response.headers.get('retry-after') ?? 0) * 1000) || 0;
    } catch (err) {
      error = o.signal?.aborted ? GIVEN_UP : fetchFailure(err, timeoutMs);
    }
    if (attempt < attempts) await sleep(Math.max(retryAfterMs, backoffDelay(attempt, o.baseDelayMs ?? 500)), o.signal);
  }
  return { ok: false, attempts, error };
}
