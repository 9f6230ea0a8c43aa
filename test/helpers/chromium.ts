/**
 * Debian's Chromium (`/usr/bin/chromium`, `apt-get install chromium`), driven by playwright-core, for the
 * console's browser tests. Nothing here downloads a browser. Without the binary the suite is skipped with
 * the reason printed, except under CI=true where a missing browser is a failure: a green CI run must mean
 * the browser tests ran. The console must be built (dist/console); it is built here when it is not.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe, it } from 'vitest';
import { CONSOLE_DIR } from '../../src/server/routes/console.js';

export const CHROMIUM_PATH = process.env.TEST_CHROMIUM_PATH ?? '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const unavailable = existsSync(CHROMIUM_PATH)
  ? undefined
  : `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium)`;

export function describeWithChromium(name: string, fn: () => void): void {
  if (!unavailable) {
    describe(name, fn);
    return;
  }
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs Chromium', () => {
        throw new Error(`${unavailable}; CI=true, so this is a failure, not a skip`);
      });
    });
    return;
  }
  console.warn(`Skipping "${name}": ${unavailable}`);
  describe.skip(name, fn);
}

/**
 * A fresh browser: playwright gives each launch a profile directory of its own, removed on close. `args`:
 * more command-line switches (`--host-resolver-rules=…` to reach the gateway under another name).
 */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...ARGS, ...args], timeout: 30_000 });
}

/** Builds the console once when dist/console has no build (a fresh clone before `npm run build`). */
export function ensureConsoleBuilt(): void {
  if (existsSync(`${CONSOLE_DIR}/index.html`)) return;
  const result = spawnSync('npx', ['vite', 'build', '--config', 'console/vite.config.ts'], {
    stdio: 'inherit',
    timeout: 240_000,
  });
  if (result.status !== 0) throw new Error('building the console failed');
}

/** Errors the page logs or throws, collected for a test to assert there are none. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('requestfailed', (request) => errors.push(`${request.url()}: ${request.failure()?.errorText}`));
  return errors;
}
