/**
 * Builds the web console into dist/console, served by the gateway under /console
 * (src/server/routes/console.ts). Everything is bundled: no CDN, no fetch but the gateway's own API.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const outDir = fileURLToPath(new URL('../dist/console', import.meta.url));

/**
 * Brotli and gzip copies beside each script and style sheet, which the gateway sends a browser that
 * accepts them: the bundle is about 1.5 MB as it is, a quarter of that compressed, and compressing it once
 * here costs nothing per request.
 */
function precompress(): Plugin {
  return {
    name: 'precompress',
    apply: 'build',
    closeBundle() {
      const assets = join(outDir, 'assets');
      for (const name of readdirSync(assets)) {
        if (!/\.(js|css)$/.test(name)) continue;
        const data = readFileSync(join(assets, name));
        writeFileSync(
          join(assets, `${name}.br`),
          brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } }),
        );
        writeFileSync(join(assets, `${name}.gz`), gzipSync(data, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  root,
  base: '/console/',
  plugins: [react(), precompress()],
  logLevel: 'warn',
  build: {
    outDir,
    emptyOutDir: true,
    chunkSizeWarningLimit: 2_000,
  },
});
