// Electron Forge: `npm start` on a machine with Electron (Vite builds of main, preload and the
// renderer, then the app), following the vite-typescript template. Installers are made by
// electron-builder (electron-builder.yml, `npm run dist`), which also packs the native runtime
// dependencies (better-sqlite3, embedded PostgreSQL) that the Vite plugin leaves out of its
// own `package` step.
import type { ForgeConfig } from '@electron-forge/shared-types';
import { FusesPlugin } from '@electron-forge/plugin-fuses';
import { VitePlugin } from '@electron-forge/plugin-vite';
import { FuseV1Options, FuseVersion } from '@electron/fuses';

/**
 * **Important**: fuses are baked into the Electron binary. These switch off every way to turn
 * the app into a general Node.js runtime (ELECTRON_RUN_AS_NODE, NODE_OPTIONS, --inspect) and
 * make it load only its own, integrity-checked asar.
 */
export const FUSES = {
  version: FuseVersion.V1,
  [FuseV1Options.RunAsNode]: false,
  [FuseV1Options.EnableCookieEncryption]: true,
  [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
  [FuseV1Options.EnableNodeCliInspectArguments]: false,
  [FuseV1Options.EnableEmbeddedAsarIntegrityValidation]: true,
  [FuseV1Options.OnlyLoadAppFromAsar]: true,
  [FuseV1Options.GrantFileProtocolExtraPrivileges]: false,
} as const;

const config: ForgeConfig = {
  packagerConfig: {
    name: 'Backfill Runbook',
    executableName: 'backfill-runbook',
    icon: 'build/icon',
    asar: { unpack: '**/*.node' },
  },
  rebuildConfig: { onlyModules: ['better-sqlite3'] },
  makers: [],
  hooks: {
    // electron is an optional dependency (an install that cannot download its binary goes on
    // without it, see scripts/postinstall.mjs); Forge looks for it among devDependencies only.
    readPackageJson: (_config, pkg: { devDependencies?: Record<string, string>; optionalDependencies?: Record<string, string> }) =>
      Promise.resolve({ ...pkg, devDependencies: { ...pkg.devDependencies, electron: pkg.optionalDependencies?.electron ?? '' } }),
  },
  plugins: [
    new VitePlugin({
      build: [
        { entry: 'electron/main/index.ts', config: 'vite.main.config.ts', target: 'main' },
        { entry: 'electron/preload/index.ts', config: 'vite.preload.config.ts', target: 'preload' },
      ],
      renderer: [{ name: 'main_window', config: 'vite.renderer.config.ts' }],
    }),
    new FusesPlugin(FUSES),
  ],
};

export default config;
