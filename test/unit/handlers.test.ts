/**
 * Every contract call, fed hostile input (wrong types, huge strings, unknown fields, extra
 * arguments, an untrusted sender), answers a clean `{ ok: false }` and never reaches the
 * engine; good input reaches it; engine errors come back as Results saying what to do next.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { CALL_NAMES, splitCallName, type CallInput, type CallName, type CallResult, type Handlers } from '../../shared/contract.ts';
import { ConnectionError, GateError, InputError } from '../../shared/errors.ts';
import { registerHandlers, type Guard, type IpcEventLike, type IpcMainLike } from '../../electron/main/handlers/index.ts';
import { MAX_INPUT_CHARS } from '../../electron/main/handlers/ipc.ts';
import { ServiceError } from '../../electron/engine/runbook/secrets.ts';
import { StoreError } from '../../electron/engine/store/index.ts';

const plan = {
  request_id: 'bf-1',
  job: 'order-daily-mart',
  range: { from: '2026-05-01', to: '2026-05-11' },
  write_mode: 'overwrite-partition' as const,
};

/** One good input per call; `satisfies` makes a new call without a case a type error. */
const VALID = {
  'app:info': {},
  'workspace:open': { dir: '/home/me/backfills' },
  'workspace:sandbox': {},
  'connections:list': {},
  'connections:save': { name: 'warehouse', url: 'postgres://u@db/x', password: 'secret', remember: 'save' },
  'connections:remove': { name: 'warehouse' },
  'connections:test': { name: 'warehouse' },
  'secrets:list': {},
  'secrets:save': { name: 'PROM_TOKEN', value: 'prom-secret', remember: 'save' },
  'secrets:remove': { name: 'PROM_TOKEN' },
  'jobs:list': {},
  'jobs:get': { name: 'order-daily-mart' },
  'plans:create': { plan },
  'runbook:get': { runId: 'bf-1' },
  'runbook:recorded': { runId: 'bf-1' },
  'runbook:sanity': { runId: 'bf-1' },
  'runbook:snapshot': { runId: 'bf-1' },
  'runbook:dryRun': { runId: 'bf-1' },
  'runbook:signoffStatus': { runId: 'bf-1' },
  'runbook:signoffRequest': { runId: 'bf-1' },
  'runbook:signHere': { runId: 'bf-1', signer: 'lead', passphrase: 'correct horse', comment: 'ok' },
  'runbook:importSignature': { runId: 'bf-1', text: '{"format":"x"}' },
  'identities:list': {},
  'identities:create': { name: 'lead', role: 'lead', passphrase: 'correct horse' },
  'run:start': { runId: 'bf-1' },
  'run:pause': { runId: 'bf-1' },
  'run:stop': { runId: 'bf-1' },
  'run:abandon': { runId: 'bf-1', reason: 'the canary moved the wrong keys' },
  'run:compare': { runId: 'bf-1' },
  'run:close': { runId: 'bf-1', comment: '' },
  'run:downstreamPlans': { runId: 'bf-1' },
  'run:note': { runId: 'bf-1', format: 'md' },
  'history:list': { search: 'bf', limit: 50 },
  'history:get': { runId: 'bf-1' },
  'history:story': { runId: 'bf-1' },
  'evidence:get': { id: 7 },
  'training:list': {},
  'training:load': { id: 1 },
  'training:check': { id: 1 },
} satisfies { [N in CallName]: CallInput<N> };

class RecordingIpc implements IpcMainLike {
  readonly handlers = new Map<string, (event: IpcEventLike, ...args: unknown[]) => unknown>();
  handle(channel: string, listener: (event: IpcEventLike, ...args: unknown[]) => unknown): void {
    if (this.handlers.has(channel)) throw new Error(`${channel} registered twice`);
    this.handlers.set(channel, listener);
  }
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  }
}

const trusted: IpcEventLike = { senderFrame: { url: 'app://runbook/index.html' }, sender: { id: 1 } };
const stranger: IpcEventLike = { senderFrame: { url: 'https://evil.example/' }, sender: { id: 1 } };

let ipc: RecordingIpc;
let reached: { name: string; args: unknown }[];
let logged: string[];
let behaviour: (name: string) => unknown;

function fakeService(): Handlers {
  const service: Record<string, Record<string, (args: unknown) => unknown>> = {};
  for (const name of CALL_NAMES) {
    const [domain, verb] = splitCallName(name);
    (service[domain] ??= {})[verb] = (args: unknown) => {
      reached.push({ name, args });
      return behaviour(name);
    };
  }
  return service as unknown as Handlers;
}

beforeEach(() => {
  ipc = new RecordingIpc();
  reached = [];
  logged = [];
  behaviour = () => 'value';
  const guard: Guard = {
    trust: (event) => event.senderFrame?.url.startsWith('app://runbook/') === true,
    redact: (text) => text.replaceAll('hunter2', '***'),
    log: (channel, err) => logged.push(`${channel}: ${err instanceof Error ? err.message : String(err)}`),
  };
  registerHandlers(ipc, guard, fakeService());
});

async function invoke(name: string, event: IpcEventLike, ...args: unknown[]): Promise<CallResult<unknown>> {
  const handler = ipc.handlers.get(name);
  if (!handler) throw new Error(`${name} is not registered`);
  return (await handler(event, ...args)) as CallResult<unknown>;
}

/** Replaces the value at a top-level key, for every key of the valid input. */
function eachField(valid: Record<string, unknown>): string[] {
  return Object.keys(valid);
}

const HOSTILE_WHOLE: [string, (valid: Record<string, unknown>) => unknown[]][] = [
  ['no argument', () => []],
  ['undefined', () => [undefined]],
  ['null', () => [null]],
  ['a string', () => ['runbook']],
  ['a number', () => [42]],
  ['an array', (v) => [[v]]],
  ['two arguments', (v) => [v, v]],
  ['an unknown field', (v) => [{ ...v, isAdmin: true }]],
  ['a __proto__ key', (v) => [JSON.parse(`{"__proto__": {"polluted": true}, ${JSON.stringify(v).slice(1, -1) || '"x": 1'}}`) as unknown]],
  ['a huge string', (v) => [{ ...v, [Object.keys(v)[0] ?? 'blob']: 'x'.repeat(MAX_INPUT_CHARS + 1) }]],
  [
    'a cycle',
    (v) => {
      const cyclic: Record<string, unknown> = { ...v };
      cyclic.self = cyclic;
      return [cyclic];
    },
  ],
  ['a BigInt', (v) => [{ ...v, big: 10n }]],
];

describe('every contract call', () => {
  it('is registered exactly once, and nothing else is', () => {
    expect([...ipc.handlers.keys()].sort()).toEqual([...CALL_NAMES].sort());
  });

  it.each(CALL_NAMES)('%s: good input reaches the engine and comes back as { ok: true }', async (name) => {
    const result = await invoke(name, trusted, VALID[name]);
    expect(result).toEqual({ ok: true, value: 'value' });
    expect(reached.map((r) => r.name)).toEqual([name]);
  });

  it.each(CALL_NAMES)('%s: hostile input is refused cleanly and never reaches the engine', async (name) => {
    const valid = VALID[name] as Record<string, unknown>;
    const cases: [string, unknown[]][] = HOSTILE_WHOLE.map(([what, make]) => [what, make(valid)]);
    for (const field of eachField(valid)) {
      for (const wrong of [{ nested: { deep: true } }, ['a', 'b'], -1.5, true, 'x'.repeat(1_000_001)]) {
        if (typeof valid[field] === typeof wrong && !Array.isArray(wrong) && typeof wrong !== 'string') continue;
        cases.push([`${field} = ${JSON.stringify(wrong).slice(0, 30)}`, [{ ...valid, [field]: wrong }]]);
      }
    }
    for (const [what, args] of cases) {
      const result = await invoke(name, trusted, ...args);
      expect(result, `${name} with ${what}`).toMatchObject({ ok: false, error: { code: 'input' } });
      if (!result.ok) expect(result.error.message, `${name} with ${what}`).toMatch(new RegExp(`^${name}[: ]`));
    }
    expect(reached).toEqual([]);
  });

  it.each(CALL_NAMES)('%s: an untrusted sender is refused before anything else', async (name) => {
    for (const event of [
      stranger,
      { senderFrame: null, sender: { id: 1 } },
      { senderFrame: { url: 'app://evil/index.html' }, sender: { id: 1 } },
    ]) {
      expect(await invoke(name, event, VALID[name])).toEqual({
        ok: false,
        error: { code: 'untrusted-sender', message: `${name} refused: the message did not come from the app's own window` },
      });
    }
    expect(reached).toEqual([]);
  });
});

describe('what the input checks say', () => {
  it.each<[CallName, unknown, string]>([
    [
      'runbook:get',
      { runId: '../../etc/passwd' },
      'runbook:get: field "runId": must be a run id: letters, digits, ".", "_", ":" or "-" (at most 128)',
    ],
    ['runbook:get', { runId: 'bf-1', extra: 1 }, 'runbook:get: unknown field "extra"'],
    ['history:list', { limit: 5000 }, 'history:list: field "limit": Too big: expected number to be <=1000'],
    ['history:list', { from: 'yesterday' }, 'history:list: field "from": must be a date YYYY-MM-DD'],
    [
      'plans:create',
      { plan: { ...plan, range: { from: '2026-05-01' } } },
      'plans:create: field "plan.range.to": Invalid input: expected string, received undefined',
    ],
    [
      'connections:save',
      { name: 'w', url: 'postgres://u@db/x', remember: 'forever' },
      'connections:save: field "remember": Invalid option: expected one of "save"|"session"',
    ],
    ['evidence:get', { id: 1.5 }, 'evidence:get: field "id": Invalid input: expected int, received number'],
    ['training:load', { id: 1.5 }, 'training:load: field "id": must be a scenario number (1, 2, …)'],
    ['training:load', { id: 0 }, 'training:load: field "id": must be a scenario number (1, 2, …)'],
    ['training:load', { id: '1' }, 'training:load: field "id": Invalid input: expected number, received string'],
    ['training:check', { id: 1e6 }, 'training:check: field "id": Too big: expected number to be <=999'],
    ['training:check', {}, 'training:check: field "id": Invalid input: expected number, received undefined'],
    [
      'runbook:signHere',
      { runId: 'bf-1', signer: 'Lead Person', passphrase: '', comment: '' },
      'runbook:signHere: field "signer": must be lowercase letters, digits, ".", "_" or "-" (at most 64) (and 1 more problem)',
    ],
  ])('%s %j', async (name, input, message) => {
    expect(await invoke(name, trusted, input)).toEqual({
      ok: false,
      error: expect.objectContaining({ code: 'input', message }) as unknown,
    });
  });
});

describe('engine errors come back as Results', () => {
  it.each<[string, unknown, object]>([
    [
      'an InputError keeps its field and hint',
      new InputError('job nope not found in /w/jobs', { field: 'job', hint: 'check the name' }),
      { code: 'input', message: 'job nope not found in /w/jobs', field: 'job', hint: 'check the name' },
    ],
    [
      'a GateError lists every reason',
      new GateError('refused: 2 gate(s) block this run', ['red flag no-dry-run: …', 'lead sign-off: none']),
      {
        code: 'gate',
        message: 'refused: 2 gate(s) block this run',
        reasons: ['red flag no-dry-run: …', 'lead sign-off: none'],
        hint: 'every reason above must be resolved before this can run',
      },
    ],
    [
      'a ServiceError keeps its code',
      new ServiceError('no run "x"', 'not-found', 'search History'),
      { code: 'not-found', message: 'no run "x"', hint: 'search History' },
    ],
    [
      'a StoreError is a store problem',
      new StoreError('disk full writing /w/runbook.sqlite', 'full', '/w/runbook.sqlite'),
      {
        code: 'store',
        message: 'disk full writing /w/runbook.sqlite',
        hint: 'the local SQLite file could not be used; the message says why',
      },
    ],
    [
      'a server that cannot be reached is a connection problem, with what to do',
      new ConnectionError('cannot connect to PostgreSQL at 127.0.0.1:1/x: connection refused', '127.0.0.1:1/x'),
      {
        code: 'connection',
        message: 'cannot connect to PostgreSQL at 127.0.0.1:1/x: connection refused',
        hint: 'start the server or fix the connection (url, password, network); nothing was changed',
      },
    ],
    [
      'a connection lost mid-statement is one too, wherever its code sits in the cause chain',
      new Error('sanity check failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }),
      {
        code: 'connection',
        message: 'sanity check failed',
        hint: 'start the server or fix the connection (url, password, network); nothing was changed',
      },
    ],
    [
      'anything else is internal, and logged',
      new Error('boom'),
      { code: 'internal', message: 'boom', hint: 'this is unexpected: the details are in the app log' },
    ],
    [
      'a password never leaves in a message',
      new Error('password authentication failed for "hunter2"'),
      { code: 'internal', message: 'password authentication failed for "***"', hint: 'this is unexpected: the details are in the app log' },
    ],
  ])('%s', async (_what, error, expected) => {
    behaviour = () => {
      throw error;
    };
    expect(await invoke('runbook:get', trusted, { runId: 'bf-1' })).toEqual({ ok: false, error: expected });
  });

  it('a rejected promise is the same as a throw', async () => {
    behaviour = () => Promise.reject(new InputError('nope'));
    expect(await invoke('run:start', trusted, { runId: 'bf-1' })).toEqual({ ok: false, error: { code: 'input', message: 'nope' } });
  });

  it('only unexpected errors are logged', async () => {
    behaviour = (name) => {
      throw name === 'run:start' ? new Error('socket hang up') : new InputError('bad');
    };
    await invoke('run:start', trusted, { runId: 'bf-1' });
    await invoke('run:stop', trusted, { runId: 'bf-1' });
    expect(logged).toEqual(['run:start: socket hang up']);
  });
});
