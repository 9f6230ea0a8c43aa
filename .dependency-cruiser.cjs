/** Import cycles in src/ and console/, type-only imports included, and the wall between the two (`npm run lint`).
 * Layer boundaries inside src/ are ESLint's. */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'A module must not depend on itself through others: see docs/architecture.md.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'server-not-console',
      severity: 'error',
      comment:
        'The gateway serves the built console as files (server/routes/console.ts); it never imports it.',
      from: { path: '^src/' },
      to: { path: '^console/' },
    },
    {
      name: 'console-not-server',
      severity: 'error',
      comment: 'The console runs in the browser and reaches the gateway over HTTP only (docs/console.md).',
      from: { path: '^console/' },
      to: { path: '^src/' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
