/**
 * The limits of shared/limits.ts, one mechanism at a time: the IPC input measure (refused
 * before zod, naming the field; never a stack overflow), bounded file reads, bounded gzip,
 * JSON nesting, YAML (duplicate keys found in one pass, tokens, nesting), the signature text
 * the app pastes, key files — and the app's job list, which must stay quick with a bomb in the
 * jobs folder. Each refusal is an InputError naming the file or call, the size and the limit.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../shared/errors.ts';
import { LIMITS, showBytes } from '../../shared/limits.ts';
import type { Config } from '../../shared/schemas.ts';
import { readKeyFile } from '../../electron/engine/evidence/fileVault.ts';
import { readSignatureFile } from '../../electron/engine/evidence/signoff.ts';
import { readBoundedFile } from '../../electron/engine/input/boundedFile.ts';
import { gunzipBounded } from '../../electron/engine/input/boundedGunzip.ts';
import { depthOver, parseBoundedJson } from '../../electron/engine/input/boundedJson.ts';
import { parseBoundedYaml } from '../../electron/engine/input/boundedYaml.ts';
import { listJobs } from '../../electron/engine/runbook/planning.ts';
import { handle, type IpcEventLike, type IpcMainLike } from '../../electron/main/handlers/ipc.ts';
import { measureInput } from '../../electron/main/handlers/inputSize.ts';
import { largestAcceptedJob, shortKeysYaml } from '../support/bigInputs.ts';
import { orderMartJob } from '../support/workspace.ts';

const dir = mkdtempSync(join(tmpdir(), 'bfr-limits-unit-'));
const failure = (fn: () => unknown): InputError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
  throw new Error('expected an InputError');
};

describe('one call from the renderer (IPC and browser mode)', () => {
  const calls: unknown[] = [];
  const handlers = new Map<string, (event: IpcEventLike, ...args: unknown[]) => unknown>();
  const ipc: IpcMainLike = { handle: (c, l) => void handlers.set(c, l), removeHandler: (c) => void handlers.delete(c) };
  handle(ipc, { trust: () => true, redact: (t) => t }, 'runbook:importSignature', (args) => {
    calls.push(args);
    return {} as never;
  });
  const event: IpcEventLike = { senderFrame: { url: 'app://runbook/index.html' }, sender: { id: 1 } };
  const call = (input: unknown) => handlers.get('runbook:importSignature')?.(event, input);

  it('refuses an input over the limit before parsing it, naming the largest field, its size and the limit', async () => {
    const result = await call({ runId: 'bf-1', text: 'x'.repeat(LIMITS.ipcInputChars) });
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'input',
        field: 'text',
        message: `runbook:importSignature refused its input: it is over 2,000,000 characters, the limit for one call (field "text" alone is 2,000,002)`,
        hint: 'the limits on input and why: docs/limits.md',
      },
    });
    expect(calls).toEqual([]);
  });

  it('measures without serialising and stops at the limit: ten million small items, 100,000 levels deep', () => {
    const many = { runId: 'bf-1', text: Array.from({ length: 10_000_000 }, () => 1) };
    const started = performance.now();
    expect(measureInput(many)).toMatchObject({ ok: false, reason: 'too-large', field: 'text' });
    console.log(`10,000,000-item input refused in ${(performance.now() - started).toFixed(0)} ms`);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(measureInput({ text: deep })).toMatchObject({ ok: true }); // no stack overflow
    expect(measureInput({ text: deep }, 100_000)).toMatchObject({ ok: false, reason: 'too-large' });
  });

  it('names the field that is not plain data', () => {
    const cyclic: Record<string, unknown> = { runId: 'bf-1' };
    cyclic.self = { back: cyclic };
    expect(measureInput(cyclic)).toEqual({ ok: false, reason: 'not-data', field: 'self.back', what: 'refers back to itself (a cycle)' });
    expect(measureInput({ runId: 'bf-1', n: 10n })).toEqual({
      ok: false,
      reason: 'not-data',
      field: 'n',
      what: 'is a bigint, not JSON data',
    });
    const small = { runId: 'bf-1', text: 'ok', list: [1, 2, 3] };
    const measured = measureInput(small);
    expect(measured.ok && Math.abs(measured.chars - JSON.stringify(small).length)).toBeLessThanOrEqual(3); // about the JSON length
  });
});

describe('files', () => {
  it('reads a file within its limit whole, and refuses one over it by its size', () => {
    const file = join(dir, 'small.txt');
    writeFileSync(file, 'x'.repeat(1000));
    expect(readBoundedFile(file, { what: 'test file', limit: 1000 }).length).toBe(1000);
    const error = failure(() => readBoundedFile(file, { what: 'test file', limit: 999, field: '--in' }));
    expect(error.message).toBe(`${file}: field "--in": the test file is 1,000 bytes, over the limit of 999 bytes`);
    expect(error.details).toMatchObject({ file, field: '--in', value: 1000 });
    expect(() => readBoundedFile(join(dir, 'missing'), { what: 'test file', limit: 10 })).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });

  it('inflates gzip up to its limit exactly, and stops one byte past it', async () => {
    const data = gzipSync(Buffer.alloc(100_000, 7));
    expect((await gunzipBounded(data, { file: 'a.bfr', what: 'run archive once decompressed', limit: 100_000 })).length).toBe(100_000);
    await expect(gunzipBounded(data, { file: 'a.bfr', what: 'run archive once decompressed', limit: 99_999 })).rejects.toThrow(
      /^a\.bfr: the run archive once decompressed is at least [\d.]+ KiB \([\d,]+ bytes\), over the limit of 97\.7 KiB \(99,999 bytes\)$/,
    );
  });

  it('refuses JSON nested deeper than the limit, naming where', () => {
    expect(depthOver({ a: [{ b: [] }] }, 3)).toEqual({ depth: 4, path: 'a.0.b' });
    expect(depthOver({ a: [{ b: [] }] }, 4)).toBeNull();
    expect(failure(() => parseBoundedJson('{"a": [[[1]]]}', { file: 'x.json', what: 'note bundle', maxDepth: 3 })).message).toBe(
      'x.json: field "a.0.0": the nesting of the note bundle is at least 4 levels, over the limit of 3 levels',
    );
  });

  it('the signature text the app pastes, and a key file, have their limits', () => {
    const text = `{"format": "${'x'.repeat(LIMITS.signatureFileBytes)}"}`;
    expect(failure(() => readSignatureFile(text, 'the signature file')).message).toBe(
      `the signature file: the sign-off signature file is ${showBytes(Buffer.byteLength(text))}, over the limit of 64 KiB (65,536 bytes)`,
    );
    const key = join(dir, 'big.key');
    writeFileSync(key, `{"name": "${'x'.repeat(LIMITS.keyFileBytes)}"}`);
    expect(failure(() => readKeyFile(key)).message).toMatch(/: the key file is 64 KiB \(65,5\d\d bytes\), over the limit of 64 KiB/);
  });
});

describe('YAML', () => {
  it('finds a duplicate key in one pass, where the yaml package compares every pair', () => {
    const keys = `name: j\nextra:\n${Array.from({ length: 1000 }, (_, i) => `  k${i}: 1\n`).join('')}  k7: 2\n`;
    expect(failure(() => parseBoundedYaml(keys, 'dup.yaml', 'job file')).message).toBe(
      'dup.yaml:1003:3: YAML syntax error: Map keys must be unique',
    );
    // Keys that only look different to YAML are the same field once read: refused too.
    expect(failure(() => parseBoundedYaml('a: 1\n"a": 2\n', 'q.yaml', 'job file')).details.field).toBe('a');
  });

  it('accepts the largest accepted job, and refuses one token more', () => {
    expect(() => parseBoundedYaml(largestAcceptedJob(), 'largest.yaml', 'job file')).not.toThrow();
    expect(failure(() => parseBoundedYaml(shortKeysYaml(100_000), 'many.yaml', 'job file')).message).toMatch(
      /^many\.yaml: the job file is at least 10,001 tokens, over the limit of 10,000 tokens \(reached at line \d+\)$/,
    );
  });
});

describe("the app's job list", () => {
  it('lists the good jobs and names each refused file, quickly, with a 50 MB bomb in the folder', () => {
    const jobs = join(dir, 'jobs');
    mkdirSync(jobs);
    writeFileSync(join(jobs, 'order-daily-mart.yaml'), orderMartJob());
    writeFileSync(join(jobs, 'bomb.yaml'), shortKeysYaml(50 * 1024 * 1024));
    writeFileSync(join(jobs, 'keys.yaml'), shortKeysYaml(200 * 1024));
    const started = performance.now();
    const listed = listJobs(jobs, { connections: { warehouse: { kind: 'postgres' } } } as unknown as Config);
    const ms = performance.now() - started;
    console.log(`jobs:list with a 50 MB and a 200 KiB bomb beside one good job: ${ms.toFixed(0)} ms`);
    expect(listed.jobs.map((j) => j.name)).toEqual(['order-daily-mart']);
    expect(listed.problems).toEqual([
      expect.stringContaining(`${join(jobs, 'bomb.yaml')}: the job file is 50 MiB (`),
      expect.stringMatching(/keys\.yaml: the job file is at least 10,001 tokens/),
    ]);
  });
});
