/**
 * Debian's Chromium (`/usr/bin/chromium`, `apt-get install chromium`), driven by playwright-core, for the
 * console's browser tests. Nothing here downloads a browser. Without the binary the suite is skipped with
 * the reason printed, except under CI=true where a missing browser is a failure: a green CI run must mean
 * the browser tests ran. The console must be built (dist/console); it is built here when it is not.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
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

/**
 * Errors the page logs or throws, collected for a test to assert there are none. A request of a page the
 * test navigates away from, still in flight when the navigation starts, is aborted by the browser: that is
 * the test leaving the page, not the page failing, so it is not collected.
 */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  const inFlight = new Set<Request>();
  const left = new WeakSet<Request>();
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('request', (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
      for (const earlier of inFlight) left.add(earlier);
    }
    inFlight.add(request);
  });
  page.on('requestfinished', (request) => inFlight.delete(request));
  page.on('requestfailed', (request) => {
    inFlight.delete(request);
    const failure = request.failure()?.errorText;
    if (left.has(request) && failure === 'net::ERR_ABORTED') return;
    errors.push(`${request.url()}: ${failure}`);
  });
  return errors;
}
