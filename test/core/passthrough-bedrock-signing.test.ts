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
