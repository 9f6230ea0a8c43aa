/**
 * Debian's Chromium (`/usr/bin/chromium`, `apt-get install chromium`), driven by playwright-core, for the
 * console's browser tests. Nothing here downloads a browser. Without the binary the suite is skipped with
 * the reason printed, except under CI=true where a missing browser is a failure: a green CI run must mean
 * the browser tests ran. The console must be built (dist/console); it is built here when it is not.
 * `signedInConsole` is the console tests' set-up: a gateway, a browser, and a page signed in to the console;
 * `signedInConsoleForTests` starts it for a describe block's tests.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, it } from 'vitest';
import { CONSOLE_DIR } from '../../src/server/routes/console.js';
import { startGateway, type StartGatewayOptions, type TestGateway } from './gateway.js';

export const CHROMIUM_PATH = process.env.TEST_CHROMIUM_PATH ?? '/usr/bin/chromium';

/** A step's bound in the browser; a test's is four of them (the machine may be running the whole suite). */
export const STEP_TIMEOUT_MS = 20_000;

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

/** A call of the gateway's management API with its admin key, JSON by default. */
export type AdminApi = (path: string, init?: RequestInit) => Promise<Response>;

export interface SignedInConsoleOptions {
  /** The console page to sign in on (`/virtual-keys`); without it the page is left blank, not signed in. */
  path?: string;
  /** The heading that page shows once signed in, waited for. */
  heading?: string;
  /** The page's default timeout: `STEP_TIMEOUT_MS` unless given. */
  timeoutMs?: number;
  gateway?: StartGatewayOptions;
  /** Runs once the gateway is up and before the browser starts (to fill the gateway's store). */
  prepare?: (gateway: TestGateway) => Promise<void>;
}

export interface SignedInConsole {
  gateway: TestGateway;
  browser: Browser;
  /** 1400×900, with a step's timeout. */
  page: Page;
  /** What the page logged or threw (`collectErrors`). */
  errors: string[];
  api: AdminApi;
  /** Goes to the console's `path` (`/configs`) and, given one, waits for its `heading`. */
  open(path: string, heading?: string): Promise<void>;
  /** Closes the browser, then the gateway. */
  close(): Promise<void>;
}

/**
 * A real gateway (`startGateway`) and a fresh Chromium whose page has signed in to the console at `path`
 * with the admin key and shows `heading`. What was started is closed again when a step fails.
 */
export async function signedInConsole(options: SignedInConsoleOptions = {}): Promise<SignedInConsole> {
  ensureConsoleBuilt();
  const gateway = await startGateway(options.gateway);
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await gateway.close();
  };
  try {
    await options.prepare?.(gateway);
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(options.timeoutMs ?? STEP_TIMEOUT_MS);
    const errors = collectErrors(page);
    const shown = (heading?: string) =>
      heading === undefined ? undefined : page.getByRole('heading', { name: heading, exact: true }).waitFor();
    const open = async (path: string, heading?: string) => {
      await page.goto(`${gateway.origin}/console${path}`);
      await shown(heading);
    };
    if (options.path !== undefined) {
      await open(options.path);
      await page.getByLabel('Gateway API key').fill(gateway.adminKey);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await shown(options.heading);
    }
    const api: AdminApi = (path, init = {}) =>
      fetch(`${gateway.url}${path}`, {
        ...init,
        headers: {
          'x-gateway-api-key': gateway.adminKey,
          'content-type': 'application/json',
          ...init.headers,
        },
      });
    return { gateway, browser, page, errors, api, open, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * `signedInConsole(options)` for the tests of the describe block it is called in: started before them and
 * handed to `started` (which keeps what its file uses, and may wait for the page), its errors emptied before
 * each test, so that a test sees only its own, and closed after the last.
 */
export function signedInConsoleForTests(
  options: SignedInConsoleOptions,
  started: (console_: SignedInConsole) => void | Promise<void>,
): void {
  let console_: SignedInConsole | undefined;
  beforeAll(async () => {
    console_ = await signedInConsole(options);
    await started(console_);
  }, 300_000);
  beforeEach(() => {
    if (console_) console_.errors.length = 0;
  });
  afterAll(async () => {
    await console_?.close();
  });
}
