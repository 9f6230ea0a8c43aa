/**
 * The browser tests' error collection (helpers/chromium.ts): a request the page makes that fails is an
 * error; one still in flight when the test navigates away, which the browser aborts, is not.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { collectErrors, describeWithChromium, launchChromium } from '../helpers/chromium.js';

describeWithChromium('collecting a page’s errors', () => {
  let server: Server;
  let origin: string;
  let browser: Browser;

  beforeAll(async () => {
    server = createServer((request, response) => {
      if (request.url === '/hang') return; // never answers
      if (request.url === '/broken') return void request.socket.destroy();
      response.setHeader('content-type', 'text/html');
      response.end('<!doctype html><title>t</title>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('leaves out what leaving the page aborts, and keeps a request that failed', async () => {
    const page = await browser.newPage();
    const errors = collectErrors(page);
    await page.goto(`${origin}/first`);
    const hanging = page.waitForRequest(`${origin}/hang`);
    await page.evaluate(`void fetch('/hang').catch(() => {})`);
    await hanging;
    await page.goto(`${origin}/second`);
    expect(errors).toEqual([]);
    await page.evaluate(`fetch('/broken').catch(() => {})`);
    // The failed request (and the browser's own console line for it).
    await expect.poll(() => errors.some((error) => error.startsWith(`${origin}/broken: net::`))).toBe(true);
    await page.close();
  });
});
