/**
 * A Bedrock pass-through is signed with SigV4 over the path as it goes on the wire, checked by the fake
 * with the independent `aws4` implementation of AWS's canonical request rules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeBedrock, type FakeBedrock } from '../fakes/bedrock/server.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { rawExchange } from './support.js';

let gateway: TestGateway;
let bedrock: FakeBedrock;

beforeAll(async () => {
  [gateway, bedrock] = await Promise.all([startGateway(), startFakeBedrock()]);
});
afterAll(async () => {
  await gateway?.close();
  await bedrock?.close();
});

describe('Bedrock pass-through paths are signed as AWS reads them', () => {
  it.each([
    ['/model/amazon.nova-pro-v1%3A0/converse', '/model/amazon.nova-pro-v1%3A0/converse'],
    ['/model/amazon.nova-pro-v1:0/converse', '/model/amazon.nova-pro-v1:0/converse'],
    ["/model/a!$&'()*+,;=@~b/converse", "/model/a!$&'()*+,;=@~b/converse"],
    // Characters a URI path cannot hold raw go percent-encoded, and are signed as such.
    ['/model/x|y[z]^w/converse', '/model/x%7Cy%5Bz%5D%5Ew/converse'],
  ])('%s', async (path, sent) => {
    const config = {
      provider: 'bedrock',
      cloudc_access_key_id: 'AKIDFAKEBEDROCK',
      cloudc_secret_access_key: 'fake-secret-key',
      cloudc_region: 'us-east-1',
      custom_host: bedrock.url,
    };
    const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hello' }] }] });
    const exchange = await rawExchange(
      gateway.origin,
      `POST /v1${path}?q=a+b&z=%2F HTTP/1.1\r\nhost: gateway\r\nx-gateway-api-key: ${gateway.adminKey}\r\n` +
        `x-gateway-config: ${JSON.stringify(config)}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
    const [response] = exchange.responses;
    expect(response.body).not.toContain('signature');
    expect(response.status).toBe(200);
    expect(bedrock.requests.at(-1)!.path).toBe(`${sent}?q=a+b&z=%2F`);
  });
});

describe('a Bedrock pass-through body larger than can be signed', () => {
  let small: TestGateway;
  beforeAll(async () => {
    small = await startGateway({ env: { GATEWAY_BODY_LIMIT_BYTES: '65536' } });
  });
  afterAll(() => small?.close());

  it('is refused with 413 as soon as it passes the limit, not once the whole upload is in', async () => {
    const config = {
      provider: 'bedrock',
      cloudc_access_key_id: 'AKIDFAKEBEDROCK',
      cloudc_secret_access_key: 'fake-secret-key',
      cloudc_region: 'us-east-1',
      custom_host: bedrock.url,
    };
    const before = bedrock.requests.length;
    // A 10 MB upload of which only the first 100 kB is sent: the rest would take as long as it takes.
    const exchange = await rawExchange(
      small.origin,
      `POST /v1/model/amazon.nova-pro-v1:0/converse HTTP/1.1\r\nhost: gateway\r\n` +
        `x-gateway-api-key: ${small.adminKey}\r\nx-gateway-config: ${JSON.stringify(config)}\r\n` +
        `content-type: application/json\r\ncontent-length: ${10 << 20}\r\n\r\n${'a'.repeat(100_000)}`,
      { waitMs: 1500 },
    );
    const [response] = exchange.responses;
    expect(response?.status).toBe(413);
    expect(JSON.parse(response.body)).toMatchObject({ error: { code: 'payload_too_large' } });
    expect(bedrock.requests.length).toBe(before);
  });
});
