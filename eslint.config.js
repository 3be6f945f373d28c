// Type-aware lint. Besides the usual, it enforces the boundaries of DESIGN.md §2:
// renderer/ and shared/ import neither electron nor Node built-ins; engine/ never imports
// electron; only engine/targets/ imports pg or the AWS SDK.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltins = [
  'node:*',
  'fs',
  'path',
  'os',
  'crypto',
  'child_process',
  'net',
  'http',
  'https',
  'stream',
  'url',
  'util',
  'events',
  'worker_threads',
];
const driverImports = ['pg', 'pg-*', '@aws-sdk/*'];

const restrict = (patterns, message) => ({
  'no-restricted-imports': ['error', { patterns: [{ group: patterns, message }] }],
});

export default tseslint.config(
  { ignores: ['.tmp/**', 'node_modules/**', 'dist/**', 'out/**', '.vite/**', 'test-results/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', '*.mjs', 'scripts/*.mjs', 'bin/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression[callee.object.name=/^(it|test|describe)$/][callee.property.name=/^(only|skip)$/]',
          message: 'No focused or skipped tests: they silently shrink what CI proves.',
        },
      ],
    },
  },
  {
    files: ['shared/**/*.ts', 'renderer/**/*.{ts,tsx}'],
    rules: restrict(
      ['electron', ...nodeBuiltins, ...driverImports],
      'shared/ and renderer/ are pure: no electron, no Node built-ins, no drivers.',
    ),
  },
  {
    files: ['electron/engine/**/*.ts', 'electron/cli/**/*.ts'],
    ignores: ['electron/engine/targets/**'],
    rules: restrict(['electron', ...driverImports], 'engine/ never imports electron; only engine/targets/ talks to pg or the AWS SDK.'),
  },
  { files: ['electron/engine/targets/**/*.ts'], rules: restrict(['electron'], 'engine/ never imports electron.') },
  // Only electron/main and electron/preload may import 'electron' (exact name: relative paths
  // through the electron/ folder are fine).
  {
    files: ['test/**/*.{ts,tsx}', 'scripts/**', 'bench/**', 'bin/**', '*.config.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'electron', message: "only electron/main and electron/preload import 'electron'." }] },
      ],
    },
  },
  // GitHub Desktop's habit: one module talks to the bridge. The page reads window.runbook in renderer/api.ts only.
  {
    files: ['renderer/**/*.{ts,tsx}'],
    ignores: ['renderer/api.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[property.name='runbook']", message: 'Only renderer/api.ts reads window.runbook: call through it.' },
        { selector: "MemberExpression[property.value='runbook']", message: 'Only renderer/api.ts reads window.runbook: call through it.' },
        {
          selector: 'CallExpression[callee.object.name=/^(it|test|describe)$/][callee.property.name=/^(only|skip)$/]',
          message: 'No focused or skipped tests: they silently shrink what CI proves.',
        },
      ],
    },
  },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
