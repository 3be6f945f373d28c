/**
 * The pure parts of notifications and HTTP probes, by table: Block Kit within Slack's limits and
 * escaped, the generic webhook document, delivery's retry rule (against a local server:
 * retried on 500, not on 404, given up on silence), and reading a number out of a Prometheus
 * answer or a JSON document. End to end: test/integration/notify.test.ts, throttle-probes.test.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliver } from '../../electron/engine/notify/deliver.ts';
import { slackEscape, slackPayload, webhookPayload } from '../../electron/engine/notify/formats.ts';
import { message } from '../../electron/engine/notify/message.ts';
import { predictedChange, whoMustSign } from '../../electron/engine/notify/runMessages.ts';
import { jsonPathValue, prometheusQueryUrl, prometheusValue } from '../../electron/engine/safety/probes/httpProbe.ts';

const m = message({
  event: 'halted',
  runId: 'bf-1',
  title: `Backfill halted: ${'x'.repeat(200)}`,
  text: 'lag 12 s > 5 s & <@channel>',
  tone: 'danger',
  fields: Array.from({ length: 12 }, (_, i): [string, string] => [`f${i}`, `v${i}`]),
  data: { status: 'halted' },
  sandbox: true,
});

describe('message formats', () => {
  it('Block Kit: a header within 150 characters, escaped mrkdwn, at most 10 fields, a fallback text', () => {
    const p = slackPayload(m) as { text: string; blocks: { type: string; text?: { text: string }; fields?: unknown[] }[] };
    expect(p.blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'context']);
    expect(p.blocks[0]?.text?.text).toHaveLength(150);
    expect(p.blocks[0]?.text?.text.startsWith('[Sandbox] Backfill halted: ')).toBe(true);
    expect(p.blocks[1]?.text?.text).toBe(':rotating_light: lag 12 s &gt; 5 s &amp; &lt;@channel&gt;');
    expect(p.blocks[2]?.fields).toHaveLength(10);
    expect(p.text.startsWith('[Sandbox] Backfill halted')).toBe(true);
    expect(slackEscape('a<b>&c')).toBe('a&lt;b&gt;&amp;c');
  });

  it('the generic webhook: event, run, the fields as an object and the data', () => {
    expect(webhookPayload(m)).toMatchObject({
      source: 'backfill-runbook',
      event: 'halted',
      runId: 'bf-1',
      sandbox: true,
      data: { status: 'halted' },
    });
    expect((webhookPayload(m).fields as Record<string, string>).f11).toBe('v11');
  });

  it('who must sign, by tier, and the predicted change summed over partitions', () => {
    expect(whoMustSign('manual', ['lee', 'kim'])).toBe("a lead's sign-off (four eyes: not the operator who runs it): lee, kim");
    expect(whoMustSign('manual', [])).toContain('no lead is registered yet');
    expect(whoMustSign('semi-auto', [])).toContain('the operator approves');
    const p = { key: 'k', start: '', end: '' };
    expect(
      predictedChange([
        { partition: p, source: {}, target: {}, change: { rows: 3, amount: '10.50' } },
        { partition: p, source: {}, target: {}, change: { rows: -1, amount: null } },
      ]),
    ).toEqual({ rows: 2, amount: 10.5 });
  });
});

describe('delivery', () => {
  let server: Server;
  let url = '';
  const hits: Record<string, number> = {};
  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      hits[path] = (hits[path] ?? 0) + 1;
      req.resume();
      if (path === '/ok') return res.end('ok');
      if (path === '/fail') return res.writeHead(500).end('boom');
      if (path === '/missing') return res.writeHead(404).end('no such hook');
      // /silent: never answers
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it.each([
    ['/ok', { ok: true, attempts: 1 }],
    ['/fail', { ok: false, attempts: 3, error: 'HTTP 500 "boom"' }],
    ['/missing', { ok: false, attempts: 1, error: 'HTTP 404 "no such hook"' }],
    ['/silent', { ok: false, attempts: 2, error: 'no answer within 200 ms' }],
  ])('%s', async (path, expected) => {
    const attempts = path === '/silent' ? 2 : 3;
    // Only /silent waits out its timeout; the others answer at once, but a first request on a
    // busy machine (two suites side by side) has taken over 200 ms, so they get a timeout no
    // answer reaches by accident.
    const timeoutMs = path === '/silent' ? 200 : 10_000;
    const d = await deliver(`${url}${path}`, { hello: 1 }, {}, { attempts, timeoutMs, baseDelayMs: 10 });
    expect(d).toMatchObject(expected);
    expect(hits[path]).toBe(expected.attempts);
  });

  it('gives up at once when abandoned (the run ended)', async () => {
    const stop = new AbortController();
    const pending = deliver(`${url}/silent`, {}, {}, { attempts: 3, timeoutMs: 60_000, signal: stop.signal });
    stop.abort();
    expect(await pending).toMatchObject({ ok: false, error: 'given up (the run ended)' });
  });
});

describe('reading a probe', () => {
  it.each([
    ['http://prom:9090', 'up', 'http://prom:9090/api/v1/query?query=up'],
    ['http://prom:9090/prometheus/', 'a{b="c"}', 'http://prom:9090/prometheus/api/v1/query?query=a%7Bb%3D%22c%22%7D'],
    ['http://prom:9090/api/v1/query', 'x', 'http://prom:9090/api/v1/query?query=x'],
  ])('the query URL of %s', (base, q, url) => expect(prometheusQueryUrl(base, q)).toBe(url));

  it('the largest sample of a vector, a scalar, and no series at all as "cannot be measured"', () => {
    const vector = (...v: string[]) => ({
      status: 'success',
      data: { resultType: 'vector', result: v.map((x) => ({ metric: {}, value: [1, x] })) },
    });
    expect(prometheusValue(vector('3', '71.5', '12'))).toBe(71.5);
    expect(prometheusValue({ status: 'success', data: { resultType: 'scalar', result: [1, '4'] } })).toBe(4);
    expect(() => prometheusValue(vector())).toThrow('no series');
    expect(() => prometheusValue(vector('NaN'))).toThrow('not a number');
    expect(() => prometheusValue({ status: 'error', error: 'parse error at char 3' })).toThrow('parse error at char 3');
  });

  it.each([
    [{ status: { totallag: 1234 } }, 'status.totallag', 1234],
    [{ partitions: [{ lag: '7' }, { lag: 9 }] }, 'partitions[1].lag', 9],
    [{ partitions: [{ lag: '7' }] }, 'partitions[0].lag', 7],
  ])('a number at a path: %j %s', (doc, path, n) => expect(jsonPathValue(doc, path)).toBe(n));

  it.each([
    [{ status: {} }, 'status.totallag', 'nothing at "totallag"'],
    [{ status: { totallag: 'high' } }, 'status.totallag', 'not a number'],
    [{ a: [1] }, 'a[3]', 'nothing at "a[3]"'],
  ])('no number at a path is an error: %j %s', (doc, path, error) => expect(() => jsonPathValue(doc, path)).toThrow(error));
});
