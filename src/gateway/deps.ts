import type { Logger } from 'pino';
import type { LogWriter } from '../observability/log-writer.js';
import type { Settings } from '../settings.js';
import type { Store } from '../store/types.js';
import type { SharedState } from '../state/index.js';
import type { Lookups } from './lookups.js';
import type { CallObserver } from './observer.js';
import type { RoutingRuntime } from './routing/runtime.js';
import type { UpstreamClient } from './upstream.js';

/** Everything the pipeline and the routes need, built once in gateway-server.ts. */
export interface GatewayDeps {
  settings: Settings;
  store: Store;
  lookups: Lookups;
  upstream: UpstreamClient;
  logWriter: LogWriter;
  logger: Logger;
  /** Fast shared state: process memory, or Redis with REDIS_URL. */
  state: SharedState;
  /** Breakers, the response cache and the target step chain. */
  routing: RoutingRuntime;
  /** See every call when it ends: the log (log-observer.ts), later metrics and traces. */
  observers: CallObserver[];
}
