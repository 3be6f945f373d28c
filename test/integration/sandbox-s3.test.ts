/**
 * The sandbox's S3 server on its own: it serves the lake to the real SDK without credentials
 * (no_sign_request), keeps its port across restarts when free, and ends by itself when the
 * process that started it is killed outright — a SIGKILLed sandbox leaves no S3 server behind.
 */
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { s3ConnectionSchema } from '../../shared/schemas.ts';
import { S3Bucket } from '../../electron/engine/targets/s3/bucket.ts';
import { createS3Client, s3Endpoint } from '../../electron/engine/targets/s3/client.ts';
import { s3rverScript, startS3Server } from '../../electron/engine/sandbox/s3Server.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the sandbox's S3 server", () => {
  it('serves unsigned requests, and starts again on the same port with the same objects', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'bfr-sandbox-s3-test-'));
    const first = await startS3Server({ directory });
    const connection = s3ConnectionSchema.parse({
      kind: 's3',
      bucket: 'lake',
      endpoint: first.info.endpoint,
      force_path_style: true,
      no_sign_request: true,
    });
    const open = () => new S3Bucket('lake', createS3Client(s3Endpoint('lake', connection, {}), 4), 4);
    const lake = open();
    await lake.ensureBucket();
    await lake.ensureBucket(); // twice: the second finds it
    await lake.put('raw/a#0.json', '{"id":1}\n');
    lake.client.destroy();
    await first.stop();

    const again = await startS3Server({ directory, port: first.info.port });
    try {
      expect(again.info.port).toBe(first.info.port);
      const reopened = open();
      expect(await reopened.getText('raw/a#0.json')).toBe('{"id":1}\n');
      expect((await reopened.listAll('raw/')).map((o) => o.key)).toEqual(['raw/a#0.json']);
      reopened.client.destroy();
    } finally {
      await again.stop();
    }
  });

  it('ends by itself when the process that started it is SIGKILLed', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'bfr-sandbox-s3-test-'));
    // A parent that starts the server and waits, as the sandbox supervisor does.
    const parent = spawn(
      'sh',
      ['-c', `"${process.execPath}" --openssl-legacy-provider "${s3rverScript()}" "${directory}" & echo "pid $!"; wait`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const pid = await new Promise<number>((resolve) => {
      let out = '';
      parent.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /pid (\d+)/.exec(out);
        if (m && out.includes('"port"')) resolve(Number(m[1]));
      });
    });
    expect(alive(pid)).toBe(true);
    parent.kill('SIGKILL');
    const started = Date.now();
    while (alive(pid) && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
    console.info(`s3rver ended ${Date.now() - started} ms after its parent was SIGKILLed`);
  });
});
