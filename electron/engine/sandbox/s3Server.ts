/**
 * The sandbox's lake: s3rver, an S3 API server on loopback, in a process of its own (see
 * s3rverProcess.mjs for why), its objects kept in a folder of the sandbox.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFailure } from './startFailure.ts';

export interface S3ServerInfo {
  endpoint: string;
  port: number;
  directory: string;
}

export interface RunningS3 {
  info: S3ServerInfo;
  stop(): Promise<void>;
}

/** A Node.js child process, as far as the sandbox needs one. */
export interface NodeChild {
  stdout: NodeJS.ReadableStream | null;
  stderr: NodeJS.ReadableStream | null;
  /** SIGTERM; the server closes and exits */
  terminate(): void;
  onExit(listener: (code: number | null) => void): void;
}

/**
 * Starts a Node.js script in a process of its own. Plain Node: `process.execPath`. The desktop
 * app passes its own (Electron's utilityProcess), since a packaged app cannot run as Node.
 */
export type NodeSpawner = (script: string, args: readonly string[], execArgv: readonly string[]) => NodeChild;

export const spawnNode: NodeSpawner = (script, args, execArgv) => {
  const child = spawn(process.execPath, [...execArgv, script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return {
    stdout: child.stdout,
    stderr: child.stderr,
    terminate: () => void (child.exitCode === null && child.signalCode === null && child.kill('SIGTERM')),
    onExit: (listener) => void child.once('exit', (code) => listener(code)),
  };
};

/**
 * The server script: beside this module when running from the sources, beside the bundle when
 * built (scripts/build-node.mjs and the Vite main build copy it there).
 */
export function s3rverScript(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 's3rverProcess.mjs'), join(here, '../../electron/engine/sandbox/s3rverProcess.mjs')];
  const found = candidates.find((p) => existsSync(p));
  if (!found)
    throw startFailure(`the sandbox's S3 server script is missing (looked at ${candidates.join(', ')}): rebuild with npm run build`);
  return found;
}

const START_TIMEOUT_MS = 30_000;

export async function startS3Server(opts: {
  directory: string;
  port?: number;
  onLog?: (line: string) => void;
  spawn?: NodeSpawner;
}): Promise<RunningS3> {
  const child = (opts.spawn ?? spawnNode)(
    s3rverScript(),
    [opts.directory, ...(opts.port ? [String(opts.port)] : [])],
    ['--openssl-legacy-provider'],
  );
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((done) =>
    child.onExit((code) => {
      exitCode = code;
      done();
    }),
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
    for (const line of d.split('\n').filter(Boolean)) opts.onLog?.(`[s3] ${line}`);
  });
  try {
    const port = await firstLine(
      child,
      exited,
      () => exitCode,
      () => stderr,
    );
    return {
      info: { endpoint: `http://127.0.0.1:${port}`, port, directory: opts.directory },
      stop: async () => {
        if (exitCode === undefined) child.terminate();
        await exited;
      },
    };
  } catch (err) {
    if (exitCode === undefined) child.terminate();
    await exited;
    throw err;
  }
}

function firstLine(child: NodeChild, exited: Promise<void>, code: () => number | null | undefined, stderr: () => string): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(
      () => reject(startFailure(`the sandbox's S3 server did not start within ${START_TIMEOUT_MS / 1000} s`)),
      START_TIMEOUT_MS,
    );
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      text += d;
      const newline = text.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      try {
        resolve((JSON.parse(text.slice(0, newline)) as { port: number }).port);
      } catch {
        reject(startFailure(`the sandbox's S3 server said something unexpected: ${text.slice(0, 200)}`));
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(
        startFailure(
          `the sandbox's S3 server exited during start-up (code ${code()}): ${stderr().trim().split('\n').slice(-5).join(' / ')}`,
        ),
      );
    });
  });
}
