import { describe, expect, it } from 'vitest';
import { GatewayMetrics, MAX_LABEL_VALUES, OTHER_LABEL_VALUE } from '../../src/observability/metrics.js';

describe('GatewayMetrics labels', () => {
  it('keeps at most MAX_LABEL_VALUES values a label, the rest counted as other', async () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    for (let i = 0; i < MAX_LABEL_VALUES + 100; i++) {
      metrics.recordCall({
        labels: metrics.callLabels({
          endpoint: 'chat',
          provider: 'openai',
          model: `made-up-model-${i}`,
          workspace: 'ws_1',
          status: 404,
        }),
        durationSeconds: 0.01,
        ttfbSeconds: null,
        upstreamSeconds: 0.009,
        tokens: undefined,
        costDollars: null,
        cacheStatus: null,
        retries: 0,
        fallbacks: 0,
        errorCode: 'model_not_found',
      });
    }
    const text = (await metrics.scrape()).text;
    const requestLines = text.split('\n').filter((line) => line.startsWith('gateway_requests_total{'));
    expect(requestLines).toHaveLength(MAX_LABEL_VALUES + 1);
    expect(text).toContain(`model="${OTHER_LABEL_VALUE}"`);
    const other = requestLines.find((line) => line.includes(`model="${OTHER_LABEL_VALUE}"`));
    expect(other?.endsWith(' 100')).toBe(true);
  });

  it('labels a call without provider or model as none', () => {
    const metrics = new GatewayMetrics({ defaultMetrics: false });
    expect(
      metrics.callLabels({ endpoint: 'chat', provider: null, model: null, workspace: 'ws', status: 446 }),
    ).toEqual({ endpoint: 'chat', provider: 'none', model: 'none', workspace: 'ws', status_class: '4xx' });
  });
});
