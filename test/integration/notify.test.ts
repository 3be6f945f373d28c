/**
 * Notifications end to end: the CLI against a real PostgreSQL, a Prometheus-compatible test
 * server and webhook receivers on 127.0.0.1. Every event arrives with its content (a dry run
 * ready for sign-off, throttled longer than N minutes, halted, failed, succeeded with its
 * reconciliation) — in Block Kit to the Slack target, as JSON to the webhook — each target
 * only the events it listens for. A webhook that answers 500 or never answers changes neither
 * the run's outcome nor its duration beyond the bounded wait for deliveries.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import Database from 'better-sqlite3';
import { seedWarehouse } from '../../electron/engine/sandbox/seed.ts';
import { DRAIN_MS } from '../../electron/engine/notify/notifier.ts';
import { waitForOutput } from '../support/cliOutput.ts';
import { startFakeMonitoring, startWebhookReceiver, type FakeMonitoring, type Received } from '../support/httpFakes.ts';
import { createTestDatabase } from '../support/pg.ts';
import { ensureIdentity } from '../support/signoff.ts';
import { makeWorkspace, orderMartJob, pgConfig, runCli, startCli, type Workspace } from '../support/workspace.ts';

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let ws: Workspace;
let monitoring: FakeMonitoring;
let slack: Awaited<ReturnType<typeof startWebhookReceiver>>;
let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
let failing: Awaited<ReturnType<typeof startWebhookReceiver>>;
let hanging: Awaited<ReturnType<typeof startWebhookReceiver>>;

type Block = { type: string; text?: { text: string }; fields?: { text: string }[]; elements?: { text: string }[] };
type SlackBody = { text: string; blocks: Block[] };
type HookBody = {
  source: string;
  event: string;
  runId: string;
  title: string;
  text: string;
  fields: Record<string, string>;
  data: Record<string, unknown>;
};

/** Slack messages received, by their header. */
const slackMessages = (): SlackBody[] => slack.received.map((r) => r.json as SlackBody);
const header = (b: SlackBody): string => b.blocks.find((x) => x.type === 'header')?.text?.text ?? '';
const fieldsOf = (b: SlackBody): string[] => b.blocks.flatMap((x) => x.fields ?? []).map((f) => f.text);
const hookMessages = (): HookBody[] => hook.received.map((r: Received) => r.json as HookBody);

function config(extra = ''): string {
  return `${pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } })}notify:
  throttled_after_min: 0.02
  targets:
    oncall:
      kind: slack
      url_env: SLACK_WEBHOOK_URL
    audit-hook:
      kind: webhook
      url_env: AUDIT_HOOK_URL
      headers_env: { X-Api-Key: AUDIT_HOOK_KEY }
      events: [throttled, halted, failed, succeeded]
${extra}`;
}

beforeAll(async () => {
  db = await createTestDatabase(inject('pgA'), 'notify');
  await seedWarehouse(db.client);
  [monitoring, slack, hook, failing, hanging] = await Promise.all([
    startFakeMonitoring(10),
    startWebhookReceiver('ok'),
    startWebhookReceiver('ok'),
    startWebhookReceiver('fail'),
    startWebhookReceiver('hang'),
  ]);
  ws = makeWorkspace('notify', {
    WAREHOUSE_PASSWORD: db.password,
    SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/XXXX`,
    AUDIT_HOOK_URL: `${hook.url}/hooks/backfill`,
    AUDIT_HOOK_KEY: 'hook-key-123',
    FAILING_URL: `${failing.url}/hook`,
    HANGING_URL: `${hanging.url}/hook`,
  });
  ws.writeConfig(config());
  // billing: the manual tier, where a lead must sign
  ws.writeJob('order-daily-mart', orderMartJob());
  ws.writeJob('orders', orderMartJob({ name: 'orders', billing: false }));
  ws.writeJob(
    'orders-mismatch',
    orderMartJob({ name: 'orders-mismatch', billing: false }).replace(
      'select coalesce(sum(orders), 0) as rows',
      'select coalesce(sum(orders), 0) + 1 as rows',
    ),
  );
  await ensureIdentity(ws, 'lead-lee', 'lead');
});

afterAll(async () => {
  await Promise.all([monitoring, slack, hook, failing, hanging].map((s) => s?.close()));
  await db?.drop();
});

function clearReceived(): void {
  for (const s of [slack, hook, failing, hanging]) s.received.length = 0;
}

describe('notifications', () => {
  it('a dry run ready for sign-off: range, partitions, predicted change, red flags and who must sign, in Block Kit', async () => {
    clearReceived();
    await db.client.query(`update mart.mart_order_daily set orders = orders + 2 where order_date = '2026-05-02'`);
    const r = await runCli(ws, ['order-daily-mart', '--from', '2026-05-01', '--to', '2026-05-04', '--run-id', 'dry-1', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(slack.received).toHaveLength(1);
    const m = slackMessages()[0];
    if (!m) throw new Error('no Slack message');
    expect(header(m)).toBe('Dry run ready for sign-off: dry-1');
    expect(m.text).toContain('Dry run ready for sign-off: dry-1');
    const fields = fieldsOf(m);
    expect(fields).toContain('*Range*\n2026-05-01 to 2026-05-04 (half-open)');
    expect(fields).toContain('*Partitions*\n3: 3 daily partitions, 2026-05-01 to 2026-05-03 inclusive');
    expect(fields.find((f) => f.startsWith('*Predicted change*'))).toMatch(/^\*Predicted change\*\nrows ±0, orders −\d+, paid_amount ±0$/); // the +2 per row on 2026-05-02 comes off
    expect(fields).toContain(
      '*Red flags*\nwarn no-stop-conditions: no stop conditions: set stop.max_replication_lag_s, stop.max_lock_wait_ms or stop.max_row_diff_ratio',
    );
    expect(fields).toContain("*Who must sign*\na lead's sign-off (four eyes: not the operator who runs it): lead-lee");
    // The webhook target does not listen for dry runs.
    expect(hook.received).toHaveLength(0);
    // The delivery is in the audit trail: who was told what, and that it arrived.
    const sqlite = new Database(ws.db, { readonly: true });
    const told = sqlite.prepare(`select detail_json as d from audit_log where event = 'run.notified' and entity_id = 'dry-1'`).all() as {
      d: string;
    }[];
    sqlite.close();
    expect(told.map((t) => JSON.parse(t.d) as Record<string, unknown>)).toEqual([
      { target: 'oncall', kind: 'slack', event: 'dry-run-ready', runId: 'dry-1', ok: true, attempts: 1 },
    ]);
  });

  it('throttled longer than N minutes, then succeeded with its reconciliation: both targets told', async () => {
    clearReceived();
    monitoring.value = 10;
    const plan = ws.writeFile(
      'notify-throttle.plan.yaml',
      `request_id: notify-throttle
job: orders
range: { from: '2026-06-01', to: '2026-06-07' }
write_mode: overwrite-partition
throttle: { sleep_ms: 300 }
stop:
  check_interval_ms: 200
  settle_ms: 400
  probes:
    - { kind: prometheus, name: kafka-lag, url: '${monitoring.url}', query: 'sum(kafka_consumergroup_lag{group="orders"})', max: 5000 }
`,
    );
    const { child, done } = startCli(ws, ['--plan', plan, '--json']);
    await waitForOutput(child, '"type":"partition-published"');
    monitoring.value = 25_000;
    await waitForOutput(child, '"type":"throttled"');
    await new Promise((res) => setTimeout(res, 2500)); // past throttled_after_min (1.2 s)
    monitoring.value = 100;
    const r = await done;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const heads = slackMessages().map(header);
    expect(heads).toEqual(['Backfill throttled for 1 s: notify-throttle', 'Backfill succeeded: notify-throttle']);
    const throttled = slackMessages()[0];
    expect(throttled && fieldsOf(throttled)).toContain('*Signals*\nprobe "kafka-lag" (Prometheus): 25000 &gt; 5000'); // mrkdwn-escaped
    const hooks = hookMessages();
    expect(hooks.map((h) => h.event)).toEqual(['throttled', 'succeeded']);
    expect(hooks[1]).toMatchObject({
      source: 'backfill-runbook',
      runId: 'notify-throttle',
      data: { status: 'succeeded', published: 6, failed: 0, reconciliation: { ok: 6, problems: 0 } },
    });
    expect(hooks[1]?.fields.Reconciliation).toBe('6 partition(s) agree with the source');
    expect(hook.received[0]?.headers['x-api-key']).toBe('hook-key-123');
  });

  it('halted, with why and how to resume', async () => {
    clearReceived();
    monitoring.value = 10;
    const plan = ws.writeFile(
      'notify-halt.plan.yaml',
      `request_id: notify-halt
job: orders
range: { from: '2026-06-10', to: '2026-06-13' }
write_mode: overwrite-partition
stop:
  probes:
    - { kind: prometheus, name: db-cpu, url: '${monitoring.url}', query: cpu, max: 80, critical: 90 }
`,
    );
    monitoring.value = 97;
    const r = await runCli(ws, ['--plan', plan]);
    expect(r.code, r.stdout + r.stderr).toBe(3);
    const m = slackMessages()[0];
    expect(m && header(m)).toBe('Backfill halted: notify-halt');
    expect(m?.blocks.find((b) => b.type === 'section' && b.text)?.text?.text).toContain(
      'critical level: probe "db-cpu" (Prometheus): 97 &gt; 90 (critical)',
    );
    expect(hookMessages()[0]).toMatchObject({ event: 'halted', data: { status: 'halted', published: 0, pending: 3 } });
    monitoring.value = 10;
  });

  it('failed: partitions that do not reconcile', async () => {
    clearReceived();
    const r = await runCli(ws, ['orders-mismatch', '--from', '2026-06-15', '--to', '2026-06-16', '--run-id', 'notify-fail']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(slackMessages().map(header)).toEqual(['Backfill failed: notify-fail']);
    expect(hookMessages()[0]).toMatchObject({ event: 'failed', data: { status: 'failed', failed: 1 } });
  });

  it('a webhook that answers 500 or never answers changes neither the outcome nor the duration beyond the bounded wait', async () => {
    ws.writeConfig(`${pgConfig({ warehouse: { url: db.url, passwordEnv: 'WAREHOUSE_PASSWORD' } })}notify:
  targets:
    broken: { kind: webhook, url_env: FAILING_URL }
    silent: { kind: slack, url_env: HANGING_URL }
`);
    try {
      const started = Date.now();
      const r = await runCli(ws, ['orders', '--from', '2026-06-20', '--to', '2026-06-24', '--run-id', 'notify-broken', '--json']);
      const wallMs = Date.now() - started;
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const finished = r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { type: string; ms?: number; published?: number })
        .find((e) => e.type === 'run-finished');
      expect(finished?.published).toBe(4);
      // the 500 was retried, then given up; the silent one was abandoned at the end
      expect(failing.received.length).toBeGreaterThanOrEqual(2);
      expect(hanging.received.length).toBeGreaterThanOrEqual(1);
      expect(r.stderr).toMatch(/notify: "succeeded" to webhook target "broken" not delivered after \d attempt\(s\): HTTP 500/);
      expect(r.stderr).toMatch(/notify: "succeeded" to slack target "silent" not delivered after \d attempt\(s\)/);
      // The run itself did not wait for them; the process waited at most the drain bound after it.
      console.info(`failing webhooks: run ${finished?.ms} ms, whole command ${wallMs} ms (drain bound ${DRAIN_MS} ms)`);
      expect(wallMs - (finished?.ms ?? 0)).toBeLessThan(DRAIN_MS + 10_000);
    } finally {
      ws.writeConfig(config());
    }
  });
});

describe('run-backfill notify test', () => {
  it('sends one test message to every target and says it arrived', async () => {
    clearReceived();
    const r = await runCli(ws, ['notify', 'test']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('notify target "oncall": delivered (HTTP 200, 1 attempt(s))');
    expect(r.stdout).toContain('notify target "audit-hook": delivered (HTTP 200, 1 attempt(s))');
    expect(slackMessages().map(header)).toEqual(['Backfill Runbook: test notification']);
    expect(hookMessages()[0]).toMatchObject({ event: 'test', data: { target: 'audit-hook' } });
  });

  it('a target that refuses is exit 2 naming it; an unset URL variable and an unknown target too', async () => {
    ws.writeConfig(`${config()}    broken: { kind: webhook, url_env: FAILING_URL }\n`);
    try {
      const refused = await runCli(ws, ['notify', 'test', '--target', 'broken']);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toMatch(/notify target "broken": NOT delivered after 3 attempt\(s\): HTTP 500/);
      const unknown = await runCli(ws, ['notify', 'test', '--target', 'nobody']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('no notify target "nobody"');
    } finally {
      ws.writeConfig(config());
    }
    ws.writeConfig(`${config()}    later: { kind: slack, url_env: NOT_SET_URL }\n`);
    try {
      const unset = await runCli(ws, ['notify', 'test']);
      expect(unset.code).toBe(2);
      expect(unset.stderr).toContain('notify.targets.later.url_env: the environment variable NOT_SET_URL is not set');
    } finally {
      ws.writeConfig(config());
    }
  });
});
