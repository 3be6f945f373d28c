/**
 * Node.js child processes for the engine (the sandbox's S3 server) in the desktop app. A
 * packaged app cannot re-run itself as Node (the RunAsNode fuse is off, forge.config.ts), so
 * they run as Electron utility processes: Node.js children the main process owns and that end
 * with it.
 */
import { utilityProcess } from 'electron';
import type { NodeSpawner } from '../engine/sandbox/s3Server.ts';

export const utilityNodeSpawner: NodeSpawner = (script, args, execArgv) => {
  const child = utilityProcess.fork(script, [...args], {
    execArgv: [...execArgv],
    stdio: 'pipe',
    serviceName: 'Backfill Runbook sandbox S3',
  });
  let running = true;
  child.once('exit', () => (running = false));
  return {
    stdout: child.stdout,
    stderr: child.stderr,
    terminate: () => void (running && child.kill()),
    onExit: (listener) => void child.once('exit', (code) => listener(code)),
  };
};
