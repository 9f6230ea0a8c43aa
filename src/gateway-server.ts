/**
 * Builds a whole gateway from settings: store, caches, upstream client, log writer and HTTP app.
 * `main.ts` runs it as a process; tests start it in-process on a free port.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { bootstrap, type BootstrapResult } from './bootstrap.js';
import type { GatewayDeps } from './gateway/deps.js';
import type { RateLimitStats } from './gateway/pipeline-types.js';
import { createRedisInvalidationBus, type InvalidationBus } from './gateway/invalidation.js';
import { embedThroughGateway } from './gateway/cache/semantic/embedding-call.js';
import { SemanticCache } from './gateway/cache/semantic/semantic-cache.js';
import { createHookRuntime } from './gateway/hooks/check-services.js';
import { runJudge } from './gateway/hooks/judge-call.js';
import { createLookups } from './gateway/lookups.js';
import { createRoutingRuntime } from './gateway/routing/runtime.js';
import { createMetricsObserver } from './gateway/metrics-observer.js';
import { GatewayMetrics } from './observability/metrics.js';
import { createLogObserver } from './gateway/log-observer.js';
import { createTraceObserver } from './gateway/trace-observer.js';
import type { TargetStep } from './gateway/steps/index.js';
import { createSharedState } from './state/index.js';
import { createUpstreamClient } from './gateway/upstream.js';
import { createLogWriter } from './observability/log-writer.js';
import { DEFAULT_RETENTION, startLogRetention } from './observability/log-retention.js';
import { createLogger } from './observability/logger.js';
import { loadPriceTable } from './observability/pricing/price-table.js';
import { createTraceExporter } from './observability/tracing.js';
import { buildApp } from './server/app.js';
import type { Settings } from './settings.js';
import { closesMs, cutCame, finalWritesBy, finalWritesMs, leastClosesMs, planStop } from './stop-plan.js';
import { settlesBy } from './core/settles-by.js';
import { closeInTurn, type ClosePart } from './stop-closes.js';
import { loadMasterKey, openStore } from './store/index.js';
import type { BlobStore } from './store/blob-store.js';
import { createLocalBlobStore } from './store/local-blob-store.js';
import { createS3BlobStore } from './store/s3-blob-store.js';
import { startBatchWorker } from './gateway/batches/batch-worker.js';
import { startProviderJobWorker } from './gateway/provider-resources/provider-job-worker.js';
import {
  BACKGROUND_EVENT_RETENTION_MS,
  FOREGROUND_INTERRUPTED_AFTER_MS,
  BACKGROUND_RESPONSE_CONCURRENCY,
} from './gateway/responses/background.js';
import { BackgroundHub } from './gateway/responses/background-hub.js';
import { NodeStop } from './gateway/node-stop.js';
import { startBackgroundResponseWorker } from './gateway/responses/background-worker.js';
import { join } from 'node:path';

export interface GatewayServer {
  app: FastifyInstance;
  deps: GatewayDeps;
  bootstrap: BootstrapResult;
  /** The address it listens on, e.g. `http://127.0.0.1:8787`. */
  listen(): Promise<string>;
  /** Stops taking requests, lets in-flight ones (streams included) and the node's jobs run on, cuts and
   * gives back what still runs when the grace period nears its end, flushes the logs: see stop-plan.ts. */
  close(): Promise<void>;
}

export async function createGatewayServer(
  settings: Settings,
  options: {
    env?: NodeJS.ProcessEnv;
    logger?: Logger;
    pgSchema?: string;
    /** The steps every target runs (steps/index.ts DEFAULT_TARGET_STEPS when absent). */
    targetSteps?: readonly TargetStep[];
    /** The rate-limit counters' clock (ms), when not their own: tests move time without waiting. */
    rateLimitClock?: () => number;
    /** How long before a foreground response left `in_progress` is failed, when not six hours (tests). */
    responsesInterruptedAfterMs?: number;
    /** How long the job workers try again work the store keeps failing for (RETRY_FOR_MS by default). */
    jobRetryForMs?: number;
  } = {},
): Promise<GatewayServer> {
  const logger = options.logger ?? createLogger(settings.logLevel);
  // Read before anything opens: a broken price file stops the start with its reason.
  const prices = loadPriceTable(settings.pricesFile);
  const masterKey = loadMasterKey(options.env ?? process.env, settings.dataDir);
  const store = await openStore({
    databaseUrl: settings.databaseUrl,
    dataDir: settings.dataDir,
    masterKey,
    pgSchema: options.pgSchema,
    analyticsMetadataKeys: settings.analyticsMetadataKeys,
  });
  const result = await bootstrap(store, settings.adminKey);
  const state = await createSharedState({
    redisUrl: settings.redisUrl,
    prefix: settings.redisPrefix,
    commandTimeoutMs: settings.redisTimeoutMs,
    onError: (err) => logger.error({ err }, 'shared state (Redis) error'),
  });
  let bus: InvalidationBus | undefined;
  const lookups = createLookups(store, settings.lookupCacheTtlMs, (event) => bus?.publish(event));
  store.onChange((change) => lookups.applyChange(change));
  const semanticCache = new SemanticCache(store, {
    index: { exactLimit: settings.semanticCacheExactLimit },
    maxEntries: settings.semanticCacheMaxEntries,
    publish: (event) => bus?.publish(event),
  });
  if (settings.redisUrl) {
    bus = await createRedisInvalidationBus({
      url: settings.redisUrl,
      prefix: settings.redisPrefix,
      commandTimeoutMs: settings.redisTimeoutMs,
      onEvent: (event) => {
        if (event.kind !== 'semantic-cache') return lookups.applyRemote(event);
        semanticCache
          .applyRemote(event)
          .catch((err: unknown) => logger.warn({ err }, 'semantic cache update from another node failed'));
      },
      onResubscribed: () => lookups.applyRemote({ kind: 'all' }),
      onError: (err) => logger.error({ err }, 'cache invalidation (Redis) error'),
    });
  }
  const blobs: BlobStore & { close?(): void } = settings.s3
    ? await createS3BlobStore(settings.s3)
    : createLocalBlobStore(join(settings.dataDir, 'blobs'));
  const logWriter = createLogWriter(store, logger, {
    batchSize: settings.logBatchSize,
    flushIntervalMs: settings.logFlushIntervalMs,
  });
  const metrics = settings.metricsEnabled ? new GatewayMetrics() : undefined;
  const traces = settings.tracesUrl
    ? await createTraceExporter({
        url: settings.tracesUrl,
        serviceName: settings.tracesServiceName,
        headers: settings.tracesHeaders,
        protocol: settings.tracesProtocol,
        delayMs: settings.tracesDelayMs,
        sampleRatio: settings.tracesSampleRatio,
        shutdownTimeoutMs: settings.tracesExportTimeoutMs,
      })
    : undefined;
  const retention =
    settings.logRetentionDays > 0
      ? startLogRetention(store, logger, {
          ...DEFAULT_RETENTION,
          maxAgeMs: settings.logRetentionDays * 86_400_000,
        })
      : undefined;
  const deps: GatewayDeps = {
    settings,
    store,
    lookups,
    upstream: createUpstreamClient(settings.customHostPolicy),
    logWriter,
    logger,
    state,
    routing: createRoutingRuntime(state, {
      cacheMaxBytes: settings.cacheMaxBytes,
      semantic: { cache: semanticCache, embed: embedThroughGateway },
      targetSteps: options.targetSteps,
      rateLimits: {
        failMode: settings.rateLimitFailMode,
        timeoutMs: settings.rateLimitTimeoutMs,
        logger,
        clock: options.rateLimitClock,
      },
    }),
    observers: [
      createLogObserver(
        logWriter,
        { enabled: settings.logBodies, maxBytes: settings.logBodyMaxBytes },
        prices,
      ),
      ...(metrics ? [createMetricsObserver(metrics)] : []),
      ...(traces ? [createTraceObserver(traces, prices)] : []),
    ],
    prices,
    metrics,
    hooks: createHookRuntime(settings, runJudge),
    blobs,
  };
  metrics?.countsFrom(
    'gateway_rate_limit_decisions_total',
    'Rate-limit policy checks since start: checked, refused (429), unavailable counters and what came of them.',
    'decision',
    () => rateLimitDecisions(deps.routing.rateLimits.stats),
  );
  metrics?.countsFrom(
    'gateway_breaker_state_errors_total',
    'Circuit-breaker state (Redis) that could not be read (the call went through as if closed) or written (its outcome went uncounted), since start.',
    'operation',
    () => ({ ...deps.routing.breaker.stats }),
  );
  if (traces)
    metrics?.countsFrom(
      'gateway_trace_calls_total',
      'Calls whose spans were exported, failed to export (refused, or the collector unreachable through the retries), or were dropped unsent (the queue full, or a stop out of time), since start.',
      'outcome',
      () => traces.counts(),
    );
  const batchWorker = settings.batchWorker
    ? startBatchWorker(deps, {
        nodeConcurrency: settings.batchNodeConcurrency,
        batchConcurrency: settings.batchConcurrency,
        leaseMs: settings.batchLeaseMs,
        pollMs: settings.batchPollMs,
        retryForMs: options.jobRetryForMs,
      })
    : undefined;
  const providerJobWorker = settings.batchWorker
    ? startProviderJobWorker(deps, { leaseMs: settings.batchLeaseMs, pollMs: settings.batchPollMs })
    : undefined;
  const backgroundResponses = new BackgroundHub();
  const responseWorker = settings.batchWorker
    ? startBackgroundResponseWorker(deps, backgroundResponses, {
        leaseMs: settings.batchLeaseMs,
        pollMs: settings.batchPollMs,
        concurrency: BACKGROUND_RESPONSE_CONCURRENCY,
        eventRetentionMs: BACKGROUND_EVENT_RETENTION_MS,
        interruptedAfterMs: options.responsesInterruptedAfterMs ?? FOREGROUND_INTERRUPTED_AFTER_MS,
        retryForMs: options.jobRetryForMs,
      })
    : undefined;
  const stop = new NodeStop();
  const app = await buildApp(deps, {
    stop,
    batchesChanged: () => {
      batchWorker?.poke();
      providerJobWorker?.poke();
    },
    backgroundResponses,
  });
  let closing: Promise<void> | undefined;
  return {
    app,
    deps,
    bootstrap: result,
    async listen() {
      return app.listen({ port: settings.port, host: settings.host });
    },
    close() {
      closing ??= (async () => {
        let plan = planStop(settings.shutdownGraceMs);
        stop.begin();
        // The stop waits for the store's writes from now on: on a saturated machine, the log thread at idle
        // priority would get no core for the final writes.
        store.prioritiseWrites();
        let cut: NodeJS.Timeout | undefined;
        const cutting = new Promise<number>((resolve) => {
          cut = setTimeout(() => {
            app.server.closeAllConnections();
            stop.cut();
            resolve(Date.now());
          }, plan.cutAt - Date.now());
          cut.unref();
        });
        // A keep-alive connection becomes idle when its last response (a long stream, say) ends; close
        // it then instead of waiting for the client or the grace period.
        const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
        sweep.unref();
        const draining = app.close().finally(() => clearInterval(sweep));
        // The requests and the jobs share one grace period (stop-plan.ts): a node stops within it, and what
        // is cut at its end is given back before the final writes.
        const workMs = Math.max(0, plan.cutAt - Date.now());
        const working = Promise.all([
          draining,
          batchWorker?.close(workMs),
          responseWorker?.close(workMs),
          providerJobWorker?.close(workMs),
          retention?.close(),
          // A request whose connection has ended may still hold an upload (its client gone): it is cut too.
          draining.then(() => stop.settled()),
        ]).catch((err: unknown) => logger.error({ err }, 'shutdown: giving back the work cut failed'));
        // Giving back what was cut writes to the store; one that does not answer would hold the stop for
        // ever (a job's release, a worker's own query under way): it is left at the final writes' end,
        // counted from the cut as it came (a loop held past the plan's cut would have spent that window), and
        // shortened when that cut came too late for it to end before the stop's latest end (stop-plan.ts).
        const cutBefore = await Promise.race([working.then(() => false), cutting.then(() => true)]);
        if (cutBefore) {
          plan = cutCame(plan, await cutting);
          if (!(await settlesBy(working, performance.now() + finalWritesBy(plan) - Date.now()))) {
            logger.error('shutdown: the work cut was not given back in time; left');
          }
        }
        clearTimeout(cut);
        // What still calls out now waits on no client and no job (an async hook's webhook or judge, a
        // provider call that goes on without its client), and would hold the stop until its own timeout: it
        // may end by the cut, then its connection is destroyed, and its call fails and is recorded by the
        // final writes.
        const outboundMs = Math.max(0, plan.cutAt - Date.now());
        await Promise.all([deps.upstream.close(outboundMs), deps.hooks.close(outboundMs)]);
        // Metrics have nothing to send: a scraper reads them (GET /metrics).
        const writesMs = finalWritesMs(plan);
        await Promise.all([deps.logWriter.close(writesMs), traces?.shutdown(writesMs)]);
        // In this order: the semantic cache's last rows before the store, the rate-limit units given back
        // before Redis. One that does not answer holds none of the others, and is torn down where it holds
        // connections of its own; the semantic cache's rows and the rate-limit units, which have none, end
        // with the store's and Redis' teardowns after them.
        const closes: ClosePart[] = [{ name: 'semantic cache', close: () => semanticCache.close() }];
        const openBus = bus;
        if (openBus) {
          closes.push({
            name: 'cache invalidation (Redis)',
            close: () => openBus.close(),
            destroy: () => openBus.destroy(),
          });
        }
        closes.push(
          { name: 'rate-limit counters', close: () => deps.routing.rateLimits.close() },
          {
            name: state.kind === 'redis' ? 'shared state (Redis)' : 'shared state',
            close: () => state.close(),
            destroy: () => state.destroy(),
          },
          { name: 'store', close: () => store.close(), destroy: () => store.destroy() },
        );
        if (blobs.close) closes.push({ name: 'blob store (S3)', close: () => blobs.close?.() });
        await closeInTurn(closes, closesMs(plan), logger, leastClosesMs(plan));
      })();
      return closing;
    },
  };
}

function rateLimitDecisions(stats: RateLimitStats): Record<string, number> {
  return {
    checked: stats.checked,
    refused: stats.refused,
    unavailable: stats.unavailable,
    admitted_unchecked: stats.admittedUnchecked,
    refused_unavailable: stats.refusedUnavailable,
    settle_failures: stats.settleFailures,
  };
}
