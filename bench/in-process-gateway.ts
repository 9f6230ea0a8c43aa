// A gateway in this process, on an embedded store in a fresh data directory, for the benches that measure
// parts of it from inside (allocation, CPU per phase): hooks-cost.ts, responses-translation.ts,
// semantic-cache.ts. `stop` closes it and removes its data.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino, type Level } from 'pino';
import { createGatewayServer } from '../src/gateway-server.js';
import { loadSettings } from '../src/settings.js';

export interface InProcessGateway {
  server: Awaited<ReturnType<typeof createGatewayServer>>;
  adminKey: string;
  stop(): Promise<void>;
}

export async function startInProcessGateway(
  name: string,
  options: { env?: Record<string, string>; logLevel?: Level | 'silent' } = {},
): Promise<InProcessGateway> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `gateway-bench-${name}-`));
  const adminKey = `gw-bench-${randomBytes(16).toString('hex')}`;
  const env = {
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_ADMIN_KEY: adminKey,
    GATEWAY_MASTER_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
    ...options.env,
  };
  const logger = pino({ level: options.logLevel ?? 'warn' });
  const server = await createGatewayServer(loadSettings(env), { env, logger });
  return {
    server,
    adminKey,
    async stop() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
