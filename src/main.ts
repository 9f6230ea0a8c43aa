/** The gateway process: settings from the environment, then serve until SIGINT/SIGTERM. */
import { createGatewayServer } from './gateway-server.js';
import { loadSettings } from './settings.js';
import { STOP_OVERRUN_MS } from './stop-plan.js';

async function main(): Promise<void> {
  const settings = loadSettings();
  const server = await createGatewayServer(settings);
  const { logger } = server.deps;
  if (server.bootstrap.createdKey) {
    // Printed once, on the first start only: the store keeps nothing but its hash.
    process.stdout.write(
      `\nAdmin API key (shown once, keep it safe): ${server.bootstrap.createdKey}\n` +
        'Send it as the x-gateway-api-key header.\n\n',
    );
  }
  const address = await server.listen();
  logger.info({ address, store: server.deps.store.kind }, 'gateway listening');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    // The stop fits in the grace period (stop-plan.ts), its every part bounded (a close that does not end
    // in time is torn down: stop-closes.ts); should anything still hang past it, the process exits rather
    // than wait for the orchestrator's kill.
    const overrun = setTimeout(() => {
      logger.error({ signal }, 'shutdown overran its grace period: exiting');
      process.exit(1);
    }, settings.shutdownGraceMs + STOP_OVERRUN_MS);
    overrun.unref();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
