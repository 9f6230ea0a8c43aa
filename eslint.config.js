import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Import specifiers that reach into a layer of src/, whatever the importing file's depth. */
const layer = (name) => ({ group: [`**/${name}/**`], message: `Layer boundary: see docs/architecture.md.` });

/**
 * The layers of src/ and what each may not import (docs/architecture.md, "Layers and their boundaries").
 * `core` is imported by every layer and imports nothing of ours; providers see only the core; the store,
 * the shared state and observability never see the pipeline; nothing but the wiring sees the HTTP
 * server. Import cycles are refused by dependency-cruiser (.dependency-cruiser.cjs), also in `npm run lint`.
 */
const boundaries = [
  {
    files: ['src/core/**/*.ts'],
    forbidden: ['gateway', 'providers', 'server', 'store', 'state', 'observability', 'ingress', 'cli'],
  },
  {
    files: ['src/providers/**/*.ts'],
    forbidden: ['gateway', 'server', 'store', 'state', 'observability', 'ingress', 'cli'],
  },
  {
    files: ['src/hooks/**/*.ts'],
    forbidden: ['gateway', 'server', 'store', 'state', 'observability', 'providers', 'ingress', 'cli'],
  },
  {
    files: ['src/store/**/*.ts', 'src/state/**/*.ts', 'src/observability/**/*.ts'],
    forbidden: ['gateway', 'server', 'providers', 'ingress', 'cli'],
  },
  {
    files: [
      'src/gateway/**/*.ts',
      'src/ingress/**/*.ts',
      'src/cli/**/*.ts',
      'src/settings.ts',
      'src/bootstrap.ts',
    ],
    forbidden: ['server'],
  },
];

/** The gateway serves the built console as files (server/routes/console.ts) and never imports its code. */
const notConsole = { group: ['**/console/src/**'], message: 'The server never imports the console.' };

export default tseslint.config(
  { ignores: ['dist/', 'data/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off',
    },
  },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } } },
  // Later entries replace this rule for their files, so each layer's entry repeats the console pattern.
  { files: ['src/**/*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [notConsole] }] } },
  ...boundaries.map(({ files, forbidden }) => ({
    files,
    rules: { 'no-restricted-imports': ['error', { patterns: [...forbidden.map(layer), notConsole] }] },
  })),
  // The web console runs in the browser and talks to the gateway only over HTTP: it imports nothing of src/
  // (also refused by dependency-cruiser).
  {
    files: ['console/src/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/src/**'], message: 'The console talks to the gateway over HTTP only.' }] },
      ],
    },
  },
);
