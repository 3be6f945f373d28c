/**
 * Probes that read a number over HTTP: an instant PromQL query against a Prometheus-compatible
 * API (Prometheus, Thanos, VictoriaMetrics, Mimir — DB CPU, Kafka consumer lag from an exporter,
 * replica lag from monitoring), or any JSON document and a path to a number in it (a
 * Burrow-style consumer-lag API). Tokens come from environment variables (the app puts its
 * secret store's values there), never from files. Every failure — refused, timed out, not JSON,
 * no number — is an error the throttle treats as "cannot be measured".
 */
import { InputError } from '../../../../shared/errors.ts';
import type { Probe } from '../../../../shared/schemas.ts';

type HttpProbe = Extract<Probe, { kind: 'prometheus' | 'http' }>;

const DEFAULT_TIMEOUT_MS = 5_000;
/** A probe answers with one small document; more is a misconfigured URL, not a reading. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The request headers a probe sends, from the environment; a variable that is not set is a configuration error. */
export function probeHeaders(probe: HttpProbe, field: string, env: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const read = (name: string, at: string): string => {
    const value = env[name];
    if (value === undefined || value === '')
      throw new InputError(`${at}: the environment variable ${name} is not set`, {
        field: at,
        value: name,
        hint: `export ${name}=… before running (in the app: save it under Workspace → Secrets)`,
      });
    return value;
  };
  if (probe.bearer_token_env) headers.authorization = `Bearer ${read(probe.bearer_token_env, `${field}.bearer_token_env`)}`;
  for (const [header, name] of Object.entries(probe.headers_env ?? {}))
    headers[header.toLowerCase()] = read(name, `${field}.headers_env.${header}`);
  return headers;
}

async function getJson(url: string, headers: Record<string, string>, timeoutMs: number): Promise<unknown> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
    text = await readLimited(response);
  } catch (err) {
    throw new Error(`${shownUrl(url)}: ${fetchFailure(err, timeoutMs)}`, { cause: err });
  }
  if (!response.ok) throw new Error(`HTTP ${response.status} from ${shownUrl(url)}${text ? `: ${text.slice(0, 200)}` : ''}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${shownUrl(url)} did not answer with JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
}

async function readLimited(response: Response): Promise<string> {
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_BODY_BYTES) throw new Error(`the answer is ${length} bytes, over the ${MAX_BODY_BYTES}-byte limit for a probe`);
  const body = await response.arrayBuffer();
  if (body.byteLength > MAX_BODY_BYTES) throw new Error(`the answer is over the ${MAX_BODY_BYTES}-byte limit for a probe`);
  return new TextDecoder().decode(body);
}

/** fetch's "fetch failed" says nothing: the cause (ECONNREFUSED …) or the timeout does. */
export function fetchFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
}

/** The URL as messages show it: without its query string (a PromQL text can be long). */
function shownUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

/** `http://prom:9090` or `http://prom:9090/prometheus/` → `…/api/v1/query?query=…` */
export function prometheusQueryUrl(base: string, promql: string): string {
  const u = new URL(base);
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = path.endsWith('/api/v1/query') ? path : `${path}/api/v1/query`;
  u.searchParams.set('query', promql);
  return u.toString();
}

/**
 * The number in a Prometheus instant-query answer: a scalar's value, or the largest sample of a
 * vector (the worst consumer group, the busiest CPU). No series at all is not zero: the exporter
 * may be down, so it cannot be measured.
 */
export function prometheusValue(answer: unknown): number {
  const a = answer as { status?: unknown; error?: unknown; data?: { resultType?: unknown; result?: unknown } } | null;
  if (a?.status !== 'success')
    throw new Error(`the query failed: ${typeof a?.error === 'string' ? a.error : JSON.stringify(answer).slice(0, 200)}`);
  const { resultType, result } = a.data ?? {};
  const sample = (v: unknown): number => {
    const n = Array.isArray(v) ? Number(v[1]) : Number.NaN;
    if (!Number.isFinite(n)) throw new Error(`a sample is not a number: ${JSON.stringify(v)}`);
    return n;
  };
  if (resultType === 'scalar') return sample(result);
  if (resultType === 'vector' && Array.isArray(result)) {
    if (result.length === 0) throw new Error('the query returned no series (is the exporter up?)');
    return Math.max(...result.map((s) => sample((s as { value?: unknown }).value)));
  }
  throw new Error(`the query returned a ${String(resultType)}, not a scalar or an instant vector`);
}

/** `status.totallag`, `partitions[0].lag` in a JSON document; a numeric string counts. */
export function jsonPathValue(doc: unknown, path: string): number {
  let node: unknown = doc;
  for (const step of path.split('.')) {
    const [, key = '', indexes = ''] = /^([^[]+)((?:\[\d+\])*)$/.exec(step) ?? [];
    node = (node as Record<string, unknown> | null)?.[key];
    for (const i of indexes.matchAll(/\[(\d+)\]/g)) node = Array.isArray(node) ? node[Number(i[1])] : undefined;
    if (node === undefined || node === null) throw new Error(`${path}: nothing at "${step}"`);
  }
  const n = typeof node === 'number' ? node : typeof node === 'string' && node.trim() !== '' ? Number(node) : Number.NaN;
  if (!Number.isFinite(n)) throw new Error(`${path} is ${JSON.stringify(node).slice(0, 80)}, not a number`);
  return n;
}

/** Measures an HTTP probe once. */
export async function measureHttpProbe(probe: HttpProbe, headers: Record<string, string>): Promise<number> {
  const timeoutMs = probe.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  if (probe.kind === 'prometheus') return prometheusValue(await getJson(prometheusQueryUrl(probe.url, probe.query), headers, timeoutMs));
  return jsonPathValue(await getJson(probe.url, headers, timeoutMs), probe.path);
}
