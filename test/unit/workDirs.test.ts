// The S3 work folders of killed processes (electron/engine/targets/s3/workDirs.ts): swept by the
// next process of the same machine, and only those.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { machineTag, makeWorkDir, sweepWorkDirs } from '../../electron/engine/targets/s3/workDirs.ts';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'bfr-workdirs-test-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** The pid of a process that ran and was reaped: no process has it now (until reused). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '']);
  if (r.pid === undefined) throw new Error('no child');
  return r.pid;
}

/** A folder as a run leaves it: something staged inside. */
function folder(name: string, ageMs = 0): string {
  const path = join(root, name);
  mkdirSync(join(path, 'source'), { recursive: true });
  writeFileSync(join(path, 'source', 'part-0.parquet'), 'staged');
  if (ageMs > 0) {
    const t = (Date.now() - ageMs) / 1000;
    utimesSync(path, t, t);
  }
  return path;
}

describe('sweepWorkDirs', () => {
  it("removes the folders of this machine's processes that no longer run, of both kinds", async () => {
    const dead = deadPid();
    const lake = folder(`bfr-lake-${machineTag()}-${dead}-Ab12Cd`);
    const spool = folder(`bfr-s3-${machineTag()}-${dead}-xY9zW0`);
    expect((await sweepWorkDirs(root)).sort()).toEqual([lake, spool].sort());
    expect(existsSync(lake)).toBe(false);
    expect(existsSync(spool)).toBe(false);
  });

  it('leaves the folders of processes that still run: this one, and another', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      const mine = folder(`bfr-lake-${machineTag()}-${process.pid}-aaaaaa`);
      const theirs = folder(`bfr-lake-${machineTag()}-${child.pid}-bbbbbb`);
      expect(await sweepWorkDirs(root)).toEqual([]);
      expect(existsSync(mine) && existsSync(theirs)).toBe(true);
      // once it is gone, its folder goes too
      child.kill('SIGKILL');
      await new Promise((done) => child.once('exit', done));
      expect(await sweepWorkDirs(root)).toEqual([theirs]);
      expect(existsSync(mine)).toBe(true);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it("leaves another machine's folders, another user's, other names, and files", async () => {
    const dead = deadPid();
    const keep = [
      folder(`bfr-lake-some.other_host-${dead}-cccccc`),
      // the same host name in another pid namespace (another container sharing /tmp)
      folder(`bfr-lake-${machineTag().replace(/\.\d+$/, '')}.4026531999-${dead}-cCcCcC`),
      folder(`bfr-lakefmt-${dead}-dddddd`),
      folder(`bfr-lake-${machineTag()}-${dead}-toolongsuffix`),
      folder(`bfr-lake-${machineTag()}-notapid-eeeeee`),
    ];
    const file = join(root, `bfr-lake-${machineTag()}-${dead}-ffffff`);
    writeFileSync(file, 'a file, not a folder of ours');
    const unrelatedOld = folder('bfr-hostile-gggggg', 3 * 24 * 3600 * 1000);
    if (process.getuid?.() === 0) {
      // another user's, though its process is gone: not this user's to remove
      const theirs = folder(`bfr-lake-${machineTag()}-${dead}-uuuuuu`);
      chownSync(theirs, 4321, 4321);
      keep.push(theirs);
    }
    expect(await sweepWorkDirs(root)).toEqual([]);
    for (const path of [...keep, file, unrelatedOld]) expect(existsSync(path), path).toBe(true);
  });

  it('removes folders named before the pid was only once they are a day old', async () => {
    const old = folder('bfr-lake-Qw3rty', 2 * 24 * 3600 * 1000);
    const oldSpool = folder('bfr-s3-Zx8cvb', 2 * 24 * 3600 * 1000);
    const fresh = folder('bfr-lake-Fr3sh1', 60 * 1000);
    expect((await sweepWorkDirs(root)).sort()).toEqual([old, oldSpool].sort());
    expect(existsSync(fresh)).toBe(true);
  });
});

describe('makeWorkDir', () => {
  it("names the folder for this machine and process, and sweeps the root's leftovers in the background", async () => {
    expect(machineTag()).toMatch(/^[A-Za-z0-9._]+$/);
    const stale = folder(`bfr-lake-${machineTag()}-${deadPid()}-Hh7hh7`);
    const made = makeWorkDir('lake', root);
    expect(basename(made)).toMatch(new RegExp(`^bfr-lake-${machineTag().replace(/\./g, '\\.')}-${process.pid}-[A-Za-z0-9]{6}$`));
    for (let i = 0; i < 100 && existsSync(stale); i++) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(stale)).toBe(false);
    // what it made is this process's: a later sweep keeps it
    expect(await sweepWorkDirs(root)).toEqual([]);
    expect(readdirSync(root)).toEqual([basename(made)]);
  });
});
