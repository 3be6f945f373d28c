/**
 * Every input past its limit (shared/limits.ts), through the real CLI: exit 2 with a message that
 * names the file (and the field, where one field is at fault), the size and the limit — never
 * minutes of parsing or a process that runs out of memory. The peak memory of each run is
 * printed; for the two bombs that used to take gigabytes, it is also held to well below what
 * reading them in would cost, because that is the behaviour under test.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../shared/limits.ts';
import {
  aliasBomb,
  deepBlockYaml,
  deepFlowYaml,
  deepJson,
  gzipBomb,
  largestAcceptedJob,
  shortKeysYaml,
  sparseFile,
} from '../support/bigInputs.ts';
import { printMeasured, runCliMeasured, type MeasuredResult } from '../support/measured.ts';
import { makeWorkspace, orderMartJob, pgConfig, type Workspace } from '../support/workspace.ts';

let ws: Workspace;
const RUN = ['--from', '2026-05-01', '--to', '2026-05-03', '--dry-run'];
const n = (x: number) => x.toLocaleString('en-US');

beforeAll(() => {
  // A server that is never reached: every refusal here happens before anything connects.
  ws = makeWorkspace('limits', { WAREHOUSE_PASSWORD: 'unused' });
  ws.writeConfig(pgConfig({ warehouse: { url: 'postgres://backfill@127.0.0.1:1/none', passwordEnv: 'WAREHOUSE_PASSWORD' } }));
});

async function refused(what: string, args: string[], expected: (string | RegExp)[]): Promise<MeasuredResult> {
  const r = await runCliMeasured(ws, args);
  printMeasured(what, r);
  expect(r.code, r.stderr).toBe(2);
  for (const e of expected) {
    if (typeof e === 'string') expect(r.stderr).toContain(e);
    else expect(r.stderr).toMatch(e);
  }
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  return r;
}

describe('job, plan and config files', () => {
  it('a 50 MB job file (the reported bomb) is refused by its size before a byte is parsed', async () => {
    writeFileSync(join(ws.dir, 'jobs', 'huge.yaml'), shortKeysYaml(50 * 1024 * 1024));
    const file = join('jobs', 'huge.yaml'); // as the CLI names it: the workspace is the current folder
    const r = await refused(
      '50 MB job file',
      ['huge', ...RUN],
      [`${file}: the job file is 50 MiB (52,428,8`, 'over the limit of 256 KiB (262,144 bytes)'],
    );
    expect(r.peakMiB ?? Infinity).toBeLessThan(300); // the 50 MB are never read in, let alone parsed (1.8–2.8 GB before)
  });

  it('a job file under the byte limit but over the token limit stops at the limit, naming the line', async () => {
    writeFileSync(join(ws.dir, 'jobs', 'keys.yaml'), shortKeysYaml(200 * 1024));
    const file = join('jobs', 'keys.yaml');
    await refused(
      '200 KiB of short keys',
      ['keys', ...RUN],
      [
        new RegExp(
          `${file}: the job file is at least ${n(LIMITS.yamlTokens + 1)} tokens, over the limit of ${n(LIMITS.yamlTokens)} tokens \\(reached at line \\d+\\)`,
        ),
      ],
    );
  });

  it('nesting past the limit, in flow and in block style', async () => {
    writeFileSync(join(ws.dir, 'jobs', 'deep-flow.yaml'), deepFlowYaml(5000));
    await refused(
      'flow nesting',
      ['deep-flow', ...RUN],
      [
        `deep-flow.yaml: the nesting of the job file is ${LIMITS.yamlDepth + 1} levels, over the limit of ${LIMITS.yamlDepth} levels (reached at line 2)`,
      ],
    );
    writeFileSync(join(ws.dir, 'jobs', 'deep-block.yaml'), deepBlockYaml(200));
    await refused(
      'block nesting',
      ['deep-block', ...RUN],
      [
        new RegExp(
          `deep-block\\.yaml: the nesting of the job file is at least \\d+ levels, over the limit of ${LIMITS.yamlDepth} levels \\(reached at line \\d+\\)`,
        ),
      ],
    );
  });

  it('an alias bomb ("billion laughs") is refused', async () => {
    writeFileSync(join(ws.dir, 'jobs', 'laughs.yaml'), aliasBomb());
    await refused('alias bomb', ['laughs', ...RUN], ['laughs.yaml: Excessive alias count indicates a resource exhaustion attack']);
  });

  it('the largest accepted job file loads (and fails later, for the unreachable server)', async () => {
    ws.writeJob('largest', largestAcceptedJob('largest'));
    const r = await runCliMeasured(ws, ['largest', ...RUN]);
    printMeasured('largest accepted job file', r);
    expect(r.stderr).not.toContain('over the limit');
    expect(r.stderr).toContain('127.0.0.1:1'); // it got as far as connecting
  });

  it('a plan file, a config file, and a device that never ends', async () => {
    const plan = ws.writeFile('big-plan.yaml', `request_id: bf-big\njob: order-daily-mart\n# ${'x'.repeat(LIMITS.yamlFileBytes)}\n`);
    ws.writeJob('order-daily-mart', orderMartJob());
    await refused('plan file', ['--plan', plan], [`${plan}: the plan file is 256 KiB (262,1`, 'over the limit of 256 KiB']);
    await refused(
      '/dev/zero as a plan',
      ['--plan', '/dev/zero'],
      [`/dev/zero: the plan file is at least 256 KiB (262,145 bytes), over the limit of 256 KiB`],
    );
    const other = makeWorkspace('limits-config');
    other.writeConfig(`connections: {}\n# ${'x'.repeat(LIMITS.yamlFileBytes)}\n`);
    const r = await runCliMeasured(other, ['status']);
    printMeasured('config file', r);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('backfill.config.yaml: the config file is 256 KiB');
  });
});

describe('bundles and archives', () => {
  it('a bundle over its limit, by size on disk', async () => {
    const file = join(ws.dir, 'huge.json');
    sparseFile(file, LIMITS.bundleBytes + 1024 * 1024, '{');
    await refused(
      '65 MiB bundle',
      ['verify', file],
      [`${file}: the file to verify is 65 MiB (68,157,440 bytes), over the limit of 64 MiB (67,108,864 bytes)`],
    );
  });

  it('a bundle nested deeper than any bundle is', async () => {
    const file = ws.writeFile('deep.json', deepJson(100_000));
    await refused(
      'deeply nested JSON',
      ['verify', file],
      [
        `${file}: field "${Array(LIMITS.jsonDepth).fill('0').join('.')}": the nesting of the note bundle is at least ${LIMITS.jsonDepth + 1} levels, over the limit of ${LIMITS.jsonDepth} levels`,
      ],
    );
  });

  it('a 3 MB gzip archive that inflates to 3 GB stops at the limit, for verify and for import', async () => {
    const file = join(ws.dir, 'bomb.bfr');
    writeFileSync(file, gzipBomb(3000));
    const message = `${file}: the run archive once decompressed is at least 96 MiB`;
    const verify = await refused('gzip bomb, verify', ['verify', file], [message, 'over the limit of 96 MiB (100,663,296 bytes)']);
    expect(verify.peakMiB ?? Infinity).toBeLessThan(1024); // 6.4 GB and an aborted Node before
    const imported = await refused('gzip bomb, import', ['import', file], [message]);
    expect(imported.peakMiB ?? Infinity).toBeLessThan(1024);
    const db = new Database(ws.db, { readonly: true });
    expect(db.prepare<[], number>('SELECT count(*) FROM runs').pluck().get()).toBe(0);
    db.close();
  });

  it('an archive over its limit on disk, and one whose gzip is damaged', async () => {
    const file = join(ws.dir, 'huge.bfr');
    sparseFile(file, LIMITS.archiveFileBytes + 1, '\u001f\u008b');
    await refused('65 MiB archive', ['verify', file], [`${file}: the file to verify is 64 MiB (67,108,86`]);
    const damaged = join(ws.dir, 'damaged.bfr');
    writeFileSync(damaged, gzipBomb(10).subarray(0, 2000));
    await refused('truncated gzip', ['verify', damaged], [`${damaged} is not a run archive: its gzip data is damaged`]);
  });
});

describe('sign-off files and keys', () => {
  it('a signature file, a sign-off request, a trusted key and a public key to register', async () => {
    const sig = ws.writeFile('big.sig.json', `{"format": "${'x'.repeat(LIMITS.signatureFileBytes)}"}`);
    await refused(
      'signature file',
      ['signoff', 'import', sig],
      [`${sig}: the signature file is 64 KiB (65,5`, 'over the limit of 64 KiB (65,536 bytes)'],
    );
    const req = join(ws.dir, 'big.req.json');
    sparseFile(req, LIMITS.signoffRequestBytes + 1, '{');
    await refused(
      'sign-off request',
      ['sign', req, '--identity', 'alice'],
      [`${req}: the sign-off request is 32 MiB (33,554,433 bytes), over the limit of 32 MiB`],
    );
    const pem = ws.writeFile('big.pub.pem', `-----BEGIN PUBLIC KEY-----\n${'A'.repeat(LIMITS.publicKeyBytes)}\n-----END PUBLIC KEY-----\n`);
    await refused(
      '--trust key',
      ['verify', join(ws.dir, 'deep.json'), '--trust', pem],
      [new RegExp(`${pem}: field "--trust": the trusted key is 16\\.1 KiB \\(16,\\d{3} bytes\\), over the limit of 16 KiB`)],
    );
    await refused(
      '--public-key',
      ['identity', 'register', '--name', 'carol', '--role', 'lead', '--public-key', pem],
      [`${pem}: field "--public-key": the public key is 16.1 KiB`],
    );
  });
});
