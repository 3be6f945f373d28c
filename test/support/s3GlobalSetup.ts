// Starts one s3rver (a real S3 API server on loopback, storing objects in a temp folder) for
// the integration project, in a process of its own (see electron/engine/sandbox/s3rverProcess.mjs). Tests read it with
// inject('s3') and make their own buckets.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';

export interface S3ServerInfo {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Where s3rver keeps buckets; `<dir>/<bucket>/._S3rver_uploads/<id>` is an open multipart upload. */
  directory: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    s3: S3ServerInfo;
  }
}

const SCRIPT = resolve(import.meta.dirname, '../../electron/engine/sandbox/s3rverProcess.mjs');

export async function startS3rver(directory: string): Promise<{ info: S3ServerInfo; close: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--openssl-legacy-provider', SCRIPT, directory], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const port = await new Promise<number>((done, fail) => {
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      text += d;
      const line = text.split('\n')[0];
      if (text.includes('\n') && line) done((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', (code) => fail(new Error(`s3rver exited during start-up (code ${code})`)));
  });
  const info = { endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', directory };
  return {
    info,
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const directory = mkdtempSync(join(tmpdir(), 'bfr-s3rver-'));
  const { info, close } = await startS3rver(directory);
  project.provide('s3', info);
  return async () => {
    await close();
    rmSync(directory, { recursive: true, force: true });
  };
}
