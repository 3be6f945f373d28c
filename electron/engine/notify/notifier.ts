/**
 * Telling people where a run already is: the workspace's `notify:` targets, each told the
 * events it listens for. **Important**: a notification never fails or slows a run — sending is
 * fire-and-forget with its own retries, a failure is logged and audited, and at the end the
 * CLI waits for what is still on its way at most DRAIN_MS, then gives it up.
 */
import { InputError } from '../../../shared/errors.ts';
import { NOTIFY_EVENTS, type NotifyConfig, type NotifyEventName } from '../../../shared/notifyConfig.ts';
import type { Config } from '../../../shared/schemas.ts';
import { deliver, type Delivery, type DeliveryOptions } from './deliver.ts';
import { slackPayload, webhookPayload } from './formats.ts';
import type { NotifyMessage } from './message.ts';

/** After a run, how long the CLI waits for notifications still on their way. */
export const DRAIN_MS = 5_000;

interface Target {
  name: string;
  kind: 'slack' | 'webhook';
  url: string;
  headers: Record<string, string>;
  events: readonly NotifyEventName[];
}

export interface NotifierOptions {
  config: NotifyConfig;
  env: NodeJS.ProcessEnv;
  /** a line for people: a delivery that failed, a target that cannot be used */
  log?: (text: string) => void;
  /** the audit trail of each delivery (must not throw) */
  record?: (detail: Record<string, unknown>) => void;
  delivery?: DeliveryOptions;
  /** refuse a target whose URL or token is missing (notify test), instead of skipping it (a run) */
  strict?: boolean;
}

export interface DeliveryReport {
  target: string;
  event: string;
  delivery: Delivery;
}

export class Notifier {
  readonly targets: Target[] = [];
  readonly throttledAfterMs: number;
  private readonly pending = new Set<Promise<DeliveryReport>>();
  private readonly abandon = new AbortController();

  constructor(private readonly o: NotifierOptions) {
    this.throttledAfterMs = o.config.throttled_after_min * 60_000;
    for (const [name, t] of Object.entries(o.config.targets)) {
      try {
        this.targets.push(resolveTarget(name, t, o.env));
      } catch (err) {
        if (o.strict) throw err;
        o.log?.(`notify: target "${name}" is not used: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  /** Sends to every target listening for the event (all of them, or `only`, for a test); never waits. */
  send(m: NotifyMessage, only?: string): Promise<DeliveryReport[]> {
    const to = this.targets.filter((t) => (only ? t.name === only : m.event === 'test' || t.events.includes(m.event)));
    return Promise.all(to.map((t) => this.track(t, m)));
  }

  private track(t: Target, m: NotifyMessage): Promise<DeliveryReport> {
    const body = t.kind === 'slack' ? slackPayload(m) : webhookPayload(m);
    const sent = deliver(t.url, body, t.headers, { ...this.o.delivery, signal: this.abandon.signal }).then((delivery) => {
      const report = { target: t.name, event: m.event, delivery };
      if (!delivery.ok)
        this.o.log?.(
          `notify: "${m.event}" to ${t.kind} target "${t.name}" not delivered after ${delivery.attempts} attempt(s): ${delivery.error}`,
        );
      try {
        this.o.record?.({
          target: t.name,
          kind: t.kind,
          event: m.event,
          runId: m.runId,
          ok: delivery.ok,
          attempts: delivery.attempts,
          ...(delivery.ok ? {} : { error: delivery.error }),
        });
      } catch {
        // the trail of a notification must not fail anything
      }
      return report;
    });
    this.pending.add(sent);
    void sent.finally(() => this.pending.delete(sent));
    return sent;
  }

  /** Waits for deliveries still on their way, at most `maxMs`; then abandons them. */
  async drain(maxMs = DRAIN_MS): Promise<void> {
    if (this.pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, maxMs)));
    await Promise.race([Promise.allSettled([...this.pending]), deadline]);
    clearTimeout(timer);
    this.abandon.abort();
    await Promise.allSettled([...this.pending]);
  }
}

function resolveTarget(name: string, t: NotifyConfig['targets'][string], env: NodeJS.ProcessEnv): Target {
  const field = `notify.targets.${name}`;
  const read = (variable: string, at: string): string => {
    const value = env[variable];
    if (value === undefined || value === '')
      throw new InputError(`${at}: the environment variable ${variable} is not set`, {
        field: at,
        value: variable,
        hint: `export ${variable}=… (in the app: save it under Workspace → Secrets)`,
      });
    return value;
  };
  const url = read(t.url_env, `${field}.url_env`);
  let protocol = '';
  try {
    protocol = new URL(url).protocol;
  } catch {
    // reported below, without the URL: it is a secret
  }
  if (protocol !== 'https:' && protocol !== 'http:')
    throw new InputError(`${field}.url_env: ${t.url_env} does not hold an http(s) URL`, { field: `${field}.url_env`, value: t.url_env });
  const headers: Record<string, string> = {};
  if (t.kind === 'webhook')
    for (const [header, variable] of Object.entries(t.headers_env ?? {}))
      headers[header.toLowerCase()] = read(variable, `${field}.headers_env.${header}`);
  return { name, kind: t.kind, url, headers, events: t.events ?? NOTIFY_EVENTS };
}

/** A notifier for the workspace, or null when its config has no `notify:` section. */
export function notifierFor(
  config: Config,
  env: NodeJS.ProcessEnv,
  options: Omit<NotifierOptions, 'config' | 'env'> = {},
): Notifier | null {
  return config.notify ? new Notifier({ ...options, config: config.notify, env }) : null;
}
