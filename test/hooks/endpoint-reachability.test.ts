/**
 * default.endpointReachability: the text is a URL the gateway probes with a HEAD request through the
 * engine's guarded outbound path. The check against fake services, then end to end against endpoints on
 * 127.0.0.1 (answering, missing, hanging past the check's timeout), reached by a gateway that opts in to
 * probing private addresses (GATEWAY_URL_CHECK_POLICY=private), and at a cloud metadata address, which
 * every policy refuses. A gateway left at the default judges the URLs of the text (and of default.validUrls)
 * under the public rules whatever GATEWAY_CUSTOM_HOST_POLICY says: loopback and private addresses are
 * refused without being contacted.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkParameterError } from '../../src/hooks/registry.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { postChat, target } from '../routing/support.js';
import { fakeServices, onAnswer, onRequest, runCheck } from './support.js';

describe('default.endpointReachability, the check', () => {
  it('probes the URL the text is, with HEAD, and passes when it is reachable', async () => {
    const services = fakeServices({ probe: (url) => !url.includes('down') });
    const up = await runCheck(
      'endpointReachability',
      onAnswer(' https://api.example.com/v1?token=t \n'),
      {},
      services,
    );
    expect(up).toMatchObject({ verdict: true, data: { url: 'https://api.example.com/v1' } });
    expect(services.probes).toEqual([{ url: 'https://api.example.com/v1?token=t', dnsOnly: false }]);
    expect(JSON.stringify(up)).not.toContain('token=t');
    const down = await runCheck('endpointReachability', onRequest('https://down.example.com/'), {}, services);
    expect(down).toMatchObject({
      verdict: false,
      explanation: 'https://down.example.com/ is not reachable.',
    });
  });

  it('fails a text that is not an http or https URL, probing nothing', async () => {
    const services = fakeServices();
    for (const text of ['not a url', 'ftp://files.example.com/x', 'see https://a.example.com/']) {
      const result = await runCheck('endpointReachability', onAnswer(text), {}, services);
      expect(result).toMatchObject({ verdict: false, data: { url: null } });
    }
    expect(services.probes).toEqual([]);
  });

  it('takes no parameters but not', () => {
    expect(checkParameterError('default.endpointReachability', {}, 'afterRequestHook')).toBeNull();
    expect(
      checkParameterError('default.endpointReachability', { not: true }, 'beforeRequestHook'),
    ).toBeNull();
    expect(checkParameterError('default.endpointReachability', { url: 'x' }, 'afterRequestHook')?.param).toBe(
      'parameters.url',
    );
  });
});

describe('default.endpointReachability through the gateway', () => {
  let endpoint: Server;
  let base: string;
  const seen: string[] = [];
  let gateway: TestGateway;
  let guarded: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    endpoint = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/hang') return;
      res.writeHead(req.url === '/ok' ? 200 : 404).end();
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
    [gateway, guarded, fake] = await Promise.all([
      startGateway({ env: { GATEWAY_URL_CHECK_POLICY: 'private' } }),
      startGateway({ env: { GATEWAY_CUSTOM_HOST_POLICY: 'private' } }),
      startFakeOpenAI({ name: 'reach' }),
    ]);
  });

  afterAll(async () => {
    endpoint?.closeAllConnections();
    await Promise.all([
      gateway?.close(),
      guarded?.close(),
      fake?.close(),
      new Promise((resolve) => endpoint?.close(resolve)),
    ]);
  });

  type Check = { verdict: boolean; data: unknown; error: unknown };
  async function checked(
    on: TestGateway,
    url: string,
    extra: Record<string, unknown> = {},
    check = 'default.endpointReachability',
  ): Promise<Check> {
    const config = {
      ...target(fake),
      input_guardrails: [{ id: 'reach', [check]: extra }],
    };
    const response = await postChat(on, config, {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: url }],
    });
    const body = (await response.json()) as {
      hook_results: { before_request_hooks: Array<{ checks: Check[] }> };
    };
    return body.hook_results.before_request_hooks[0]!.checks[0]!;
  }

  it('passes an endpoint that answers, and fails one that answers 404', async () => {
    expect((await checked(gateway, `${base}/ok`)).verdict).toBe(true);
    expect((await checked(gateway, `${base}/missing`)).verdict).toBe(false);
    expect(seen).toEqual(['HEAD /ok', 'HEAD /missing']);
  });

  it("gives up on an endpoint that hangs at the check's timeout", async () => {
    const started = performance.now();
    const result = await checked(gateway, `${base}/hang`, { timeout: 300, on_error: 'fail' });
    expect(result.verdict).toBe(false);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  // Cloud metadata and link-local addresses are refused under every policy (docs/settings.md).
  it('fails an address the custom-host policy refuses', async () => {
    const result = await checked(gateway, 'http://169.254.169.254/latest/meta-data/');
    expect(result.verdict).toBe(false);
    expect(result.data).toEqual({ url: 'http://169.254.169.254/latest/meta-data/' });
  });

  // The URLs are the caller's (or the model's) text: judged as a config author's custom_host is, they
  // would let any caller of the config ask the gateway which internal hosts and ports answer.
  it('refuses loopback and private addresses of the text without contacting them, by default', async () => {
    const before = seen.length;
    for (const url of [`${base}/ok`, 'http://10.0.0.5:6379/', `http://localhost:${new URL(base).port}/ok`]) {
      const result = await checked(guarded, url, { timeout: 2_000 });
      expect(result.verdict, url).toBe(false);
      expect(result.error, url).toBeNull();
    }
    const text = `see ${base}/ok and http://10.0.0.5/`;
    for (const onlyDNS of [false, true]) {
      const result = await checked(guarded, text, { onlyDNS, timeout: 2_000 }, 'default.validUrls');
      expect(result.verdict).toBe(false);
      expect(result.data).toMatchObject({ checked: 2, invalid: [`${base}/ok`, 'http://10.0.0.5/'] });
    }
    expect(seen.length).toBe(before);
  });
});
