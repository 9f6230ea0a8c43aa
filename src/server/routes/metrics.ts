import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../core/errors.js';
import type { GatewayDeps } from '../../gateway/deps.js';
import { bearerToken } from '../../gateway/request-config.js';

/**
 * `GET /metrics`: the Prometheus text exposition (docs/observability.md). Not under /v1 and not behind a
 * gateway API key, as scrapers expect; `GATEWAY_METRICS_TOKEN` puts it behind a bearer token instead, and
 * `GATEWAY_METRICS=off` removes it.
 */
export async function registerMetricsRoute(app: FastifyInstance, deps: GatewayDeps): Promise<void> {
  const { metrics } = deps;
  if (!metrics) return;
  const token = deps.settings.metricsToken;
  const expected = token === undefined ? undefined : digest(token);
  app.get('/metrics', async (request, reply) => {
    if (expected !== undefined) {
      // The scheme in any case (`bearer` too), as HTTP has it.
      const given = bearerToken(request.headers);
      if (given === undefined || !timingSafeEqual(digest(given), expected)) {
        throw new GatewayError(
          'invalid_api_key',
          'GET /metrics needs Authorization: Bearer <GATEWAY_METRICS_TOKEN>',
          { param: 'authorization' },
        );
      }
    }
    const { contentType, text } = await metrics.scrape();
    return reply.type(contentType).send(text);
  });
}

/** Compared as digests, so that neither the length nor the bytes of the token leak through timing. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
