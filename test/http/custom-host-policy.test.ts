/**
 * Where custom_host may point. Self-hosted defaults reach loopback and private servers; the `public`
 * policy refuses them, including names that resolve to them (checked when the connection is made);
 * metadata and link-local addresses are refused under every policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import {
  addressRefusal,
  checkCustomHost,
  guardedLookup,
  POLICY_REFUSAL_CODE,
  type ResolveAll,
} from '../../src/gateway/custom-host.js';
import { GatewayError } from '../../src/core/errors.js';
import { startFakeOpenAI, type FakeUpstream } from '../fakes/openai/server.js';
import { postChat, startGateway, type TestGateway } from '../helpers/gateway.js';

describe('address rules', () => {
  it.each([
    ['169.254.169.254', 'private'],
    ['169.254.170.2', 'private'],
    ['100.100.100.200', 'private'],
    ['fd00:ec2::254', 'private'],
    ['fe80::1', 'private'],
    ['::ffff:169.254.169.254', 'private'],
    ['127.0.0.1', 'public'],
    ['10.1.2.3', 'public'],
    ['172.20.0.1', 'public'],
    ['192.168.1.1', 'public'],
    ['100.64.0.1', 'public'],
    ['::1', 'public'],
    ['fd12:3456::1', 'public'],
    ['::ffff:10.0.0.1', 'public'],
    ['0.0.0.0', 'public'],
    // IPv6 forms that carry an IPv4 address are judged by it: NAT64 (64:ff9b::/96), 6to4 (2002::/16),
    // IPv4-compatible (::/96)
    ['64:ff9b::a9fe:a9fe', 'private'],
    ['64:ff9b::169.254.169.254', 'private'],
    ['2002:a9fe:a9fe::', 'private'],
    ['2002:a9fe:a9fe:1::2', 'private'],
    ['::a9fe:a9fe', 'private'],
    ['::169.254.169.254', 'private'],
    ['64:ff9b:1::a9fe:a9fe', 'private'],
    ['64:ff9b::7f00:1', 'public'],
    ['64:ff9b::a00:1', 'public'],
    ['2002:c0a8:101::', 'public'],
    ['::7f00:1', 'public'],
    // local-use NAT64 (64:ff9b:1::/48) and site-local (fec0::/10) are not public whatever they carry
    ['64:ff9b:1::808:808', 'public'],
    ['fec0::1', 'public'],
    ['FEC0:0:0:1::1', 'public'],
  ] as const)('%s is refused under the %s policy', (address, policy) => {
    expect(addressRefusal(address, policy)).toBeDefined();
  });

  it.each([
    ['127.0.0.1', 'private'],
    ['10.1.2.3', 'private'],
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
    ['64:ff9b::808:808', 'public'],
    ['2002:808:808::1', 'public'],
    ['64:ff9b::7f00:1', 'private'],
    ['fec0::1', 'private'],
  ] as const)('%s is allowed under the %s policy', (address, policy) => {
    expect(addressRefusal(address, policy)).toBeUndefined();
  });

  it.each([
    'http://metadata.google.internal/computeMetadata/v1',
    'http://169.254.169.254/latest/meta-data',
    'http://[fd00:ec2::254]/',
    'file:///etc/passwd',
    'gopher://example.com',
    'http://user:pass@example.com/v1',
    'not a url',
  ])('%s is refused under every policy', (url) => {
    for (const policy of ['private', 'public'] as const) {
      expect(() => checkCustomHost(url, policy)).toThrow(GatewayError);
    }
  });

  it.each([
    'http://METADATA.GOOGLE.INTERNAL./computeMetadata/v1',
    'http://Metadata.Google.Internal./computeMetadata/v1',
    'http://metadata./computeMetadata/v1',
    'http://INSTANCE-DATA./latest/meta-data',
    'http://metadata.azure.com./metadata/instance',
    'http://169.254.169.254./latest/meta-data',
    'http://0xA9.0xFE.0xA9.0xFE/latest/meta-data',
    'http://[::FFFF:169.254.169.254]/latest/meta-data',
    'http://[FD00:EC2::254]/',
    'http://[64:ff9b::a9fe:a9fe]/latest/meta-data',
    'http://[64:FF9B::169.254.169.254]/latest/meta-data',
    'http://[2002:a9fe:a9fe::]/latest/meta-data',
    'http://[::a9fe:a9fe]/latest/meta-data',
  ])('%s (other case, trailing dot, other notation) is refused under every policy', (url) => {
    for (const policy of ['private', 'public'] as const) {
      expect(() => checkCustomHost(url, policy)).toThrow(GatewayError);
    }
  });

  it('IP literals written with a trailing dot or in upper case are judged as the address', () => {
    expect(addressRefusal('169.254.169.254.', 'private')).toBeDefined();
    expect(addressRefusal('FE80::1', 'private')).toBeDefined();
    expect(addressRefusal('[::FFFF:10.0.0.1]', 'public')).toBeDefined();
  });

  it('the connect-time lookup refuses what resolves to a forbidden address', async () => {
    const result = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup('public')('localhost', {}, (err) => resolve(err)),
    );
    expect(result?.code).toBe(POLICY_REFUSAL_CODE);
    const allowed = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup('private')('localhost', {}, (err) => resolve(err)),
    );
    expect(allowed).toBeNull();
  });

  it('IPv6 literals that carry a non-public IPv4 address, or are site-local, are refused under the public policy', () => {
    for (const url of [
      'http://[64:ff9b::a00:1]/v1',
      'http://[64:ff9b:1::808:808]/v1',
      'http://[2002:7f00:1::]/v1',
      'http://[::7f00:1]/v1',
      'http://[fec0::1]/v1',
    ]) {
      expect(() => checkCustomHost(url, 'public')).toThrow(/not a public address/);
    }
    expect(() => checkCustomHost('http://[64:ff9b::808:808]/v1', 'public')).not.toThrow();
  });

  it('the connect-time lookup judges a resolved IPv6 address by the IPv4 address it carries', async () => {
    const resolvingTo =
      (address: string): ResolveAll =>
      (_hostname, _options, callback) =>
        callback(null, [{ address, family: 6 }]);
    const outcome = (policy: 'private' | 'public', address: string) =>
      new Promise<NodeJS.ErrnoException | null>((resolve) =>
        guardedLookup(policy, resolvingTo(address))('nat64.example', {}, (err) => resolve(err)),
      );
    expect((await outcome('private', '64:ff9b::a9fe:a9fe'))?.code).toBe(POLICY_REFUSAL_CODE);
    expect((await outcome('private', '2002:a9fe:a9fe::'))?.code).toBe(POLICY_REFUSAL_CODE);
    expect((await outcome('public', '::7f00:1'))?.code).toBe(POLICY_REFUSAL_CODE);
    expect((await outcome('public', '64:ff9b:1::808:808'))?.code).toBe(POLICY_REFUSAL_CODE);
    expect((await outcome('public', 'fec0::1'))?.code).toBe(POLICY_REFUSAL_CODE);
    expect(await outcome('public', '64:ff9b::808:808')).toBeNull();
  });

  it('an IPv6 address with a zone id is judged by the IPv4 address it carries, without throwing', async () => {
    expect(addressRefusal('64:ff9b::a9fe:a9fe%eth0', 'private')).toMatch(/carries 169\.254\.169\.254/);
    expect(addressRefusal('2002:a00:1::%2', 'public')).toMatch(/carries 10\.0\.0\.1/);
    expect(addressRefusal('64:ff9b::808:808%eth0', 'public')).toBeUndefined();
    const refused = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup('private', (_hostname, _options, callback) =>
        callback(null, [{ address: '64:ff9b::a9fe:a9fe%eth0', family: 6 }]),
      )('nat64.example', {}, (err) => resolve(err)),
    );
    expect(refused?.code).toBe(POLICY_REFUSAL_CODE);
  });

  it('localhost names are refused under the public policy only', () => {
    expect(() => checkCustomHost('http://localhost:11434/v1', 'public')).toThrow(GatewayError);
    expect(() => checkCustomHost('http://LOCALHOST.:11434/v1', 'public')).toThrow(GatewayError);
    expect(() => checkCustomHost('http://ollama.LocalHost.:11434/v1', 'public')).toThrow(GatewayError);
    expect(() => checkCustomHost('http://localhost:11434/v1', 'private')).not.toThrow();
  });

  it('a value accepted under one policy is still checked under the other', () => {
    expect(() => checkCustomHost('http://10.1.2.3:8000/v1', 'private')).not.toThrow();
    expect(() => checkCustomHost('http://10.1.2.3:8000/v1', 'public')).toThrow(/not a public address/);
    expect(() => checkCustomHost('http://10.1.2.3:8000/v1', 'private')).not.toThrow();
  });
});

describe('the public policy through the gateway', () => {
  let gateway: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    gateway = await startGateway({ env: { GATEWAY_CUSTOM_HOST_POLICY: 'public' } });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const call = (customHost: string) =>
    fetch(`${gateway.url}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-api-key': gateway.adminKey,
        'x-gateway-provider': 'openai',
        'x-gateway-custom-host': customHost,
        authorization: 'Bearer sk-test',
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('refuses a loopback address with a 400 naming the header, and never calls it', async () => {
    const response = await call(fake.url);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { param: string; code: string } };
    expect(body.error).toMatchObject({ param: 'x-gateway-custom-host', code: 'custom_host_refused' });
    expect(fake.requests).toHaveLength(0);
  });

  it('refuses a name that resolves to loopback when it connects, with a 400', async (context) => {
    // The machine's own name resolves to a loopback address on most hosts; the check happens at connect.
    const name = hostname();
    const resolved = await lookup(name).catch(() => undefined);
    if (!resolved || addressRefusal(resolved.address, 'public') === undefined) {
      context.skip(`${name} does not resolve to a non-public address on this machine`);
      return;
    }
    const response = await call(fake.url.replace('127.0.0.1', name));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string } };
    expect(body.error.code).toBe('custom_host_refused');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('host names in another case or with a trailing dot, through the gateway', () => {
  let privateGateway: TestGateway;
  let publicGateway: TestGateway;
  let fake: FakeUpstream;

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    privateGateway = await startGateway();
    publicGateway = await startGateway({ env: { GATEWAY_CUSTOM_HOST_POLICY: 'public' } });
  });
  afterAll(async () => {
    await privateGateway?.close();
    await publicGateway?.close();
    await fake?.close();
  });

  const call = (gateway: TestGateway, customHost: string) =>
    postChat(
      gateway,
      { provider: 'openai', api_key: 'sk-test', custom_host: customHost },
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    );

  async function expectRefused(response: Response, message: RegExp): Promise<void> {
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { param: string; code: string; message: string } };
    expect(body.error).toMatchObject({ param: 'config.custom_host', code: 'custom_host_refused' });
    expect(body.error.message).toMatch(message);
  }

  it.each([
    'http://METADATA.GOOGLE.INTERNAL./computeMetadata/v1',
    'http://metadata.google.internal./computeMetadata/v1',
    'http://Metadata.Azure.Com./metadata/instance',
  ])('refuses the metadata name %s under the default policy', async (customHost) => {
    await expectRefused(await call(privateGateway, customHost), /metadata/);
  });

  it.each(['http://169.254.169.254./latest/meta-data', 'http://[::FFFF:A9FE:A9FE]/latest/meta-data'])(
    'refuses the metadata address %s under the default policy',
    async (customHost) => {
      await expectRefused(await call(privateGateway, customHost), /metadata|link-local/);
    },
  );

  it('refuses LOCALHOST. under the public policy, and never calls it', async () => {
    const before = fake.requests.length;
    const port = new URL(fake.url).port;
    await expectRefused(await call(publicGateway, `http://LOCALHOST.:${port}/v1`), /public address/);
    await expectRefused(await call(publicGateway, `http://api.LocalHost.:${port}/v1`), /public address/);
    expect(fake.requests).toHaveLength(before);
  });
});
