import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/**
 * The layers of src/ and what each may import (docs/architecture.md, "Boundaries"). `core` is imported by
 * every layer and imports nothing of ours; providers see only the core; the store and the shared state
 * never see the pipeline; nothing but the wiring sees the HTTP server.
 */
const layerZones = [
  { target: './src/core', from: './src', except: ['./core'], message: 'core imports nothing of ours.' },
  {
    target: './src/providers',
    from: './src',
    except: ['./providers', './core'],
    message: 'Provider adapters import only the core and their own folder.',
  },
  {
    target: ['./src/observability', './src/cli', './src/settings.ts', './src/bootstrap.ts'],
    from: './src/server',
    message: 'Only the wiring (gateway-server.ts, main.ts) imports the HTTP server.',
  },
  {
    target: ['./src/store', './src/state', './src/observability'],
    from: ['./src/gateway', './src/server', './src/providers', './src/cli'],
    message: 'The store, the shared state and observability never import the pipeline or the server.',
  },
  {
    target: ['./src/core', './src/gateway', './src/ingress', './src/providers', './src/store', './src/state'],
    from: './src/server',
    message: 'Only the wiring (gateway-server.ts, main.ts) imports the HTTP server.',
  },
];

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
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })] },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
    },
  },
);
