/** startGateway (test/helpers/gateway.ts): the admin key it gives is the one the gateway it started takes. */
import { describe, expect, it } from 'vitest';
import { deploymentKeys, startGateway, type TestGateway } from '../helpers/gateway.js';

async function selfStatus(gateway: TestGateway): Promise<number> {
  const reply = await fetch(`${gateway.url}/api-keys/self`, {
    headers: { 'x-gateway-api-key': gateway.adminKey },
  });
  await reply.body?.cancel();
  return reply.status;
}

describe('startGateway', () => {
  it('gives the admin key it chose', async () => {
    const gateway = await startGateway();
    try {
      expect(await selfStatus(gateway)).toBe(200);
    } finally {
      await gateway.close();
    }
  });

  it('gives GATEWAY_ADMIN_KEY as the admin key when the environment passed sets it', async () => {
    const keys = deploymentKeys('chosen');
    const gateway = await startGateway({ env: keys });
    try {
      expect(gateway.adminKey).toBe(keys.GATEWAY_ADMIN_KEY);
      expect(await selfStatus(gateway)).toBe(200);
    } finally {
      await gateway.close();
    }
  });
});
