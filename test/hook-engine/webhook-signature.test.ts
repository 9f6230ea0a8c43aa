/** The webhook signature header: what a receiver verifies (docs/guardrails.md, "Webhook signatures"). */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhookBody, verifyWebhookSignature } from '../../src/gateway/hooks/webhook-signature.js';

describe('webhook signature', () => {
  const body = JSON.stringify({ request: { text: 'hi' } });

  it('is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">', () => {
    const header = signWebhookBody('s3cret', body, 1_700_000_000);
    const mac = createHmac('sha256', 's3cret').update(`1700000000.${body}`).digest('hex');
    expect(header).toBe(`t=1700000000,v1=${mac}`);
    expect(verifyWebhookSignature('s3cret', body, header, 300, 1_700_000_100)).toBe(true);
  });

  it('fails for another secret, a changed body, or a stale timestamp', () => {
    const header = signWebhookBody('s3cret', body, 1_700_000_000);
    expect(verifyWebhookSignature('other', body, header, 300, 1_700_000_000)).toBe(false);
    expect(verifyWebhookSignature('s3cret', `${body} `, header, 300, 1_700_000_000)).toBe(false);
    expect(verifyWebhookSignature('s3cret', body, header, 300, 1_700_000_301)).toBe(false);
    expect(verifyWebhookSignature('s3cret', body, 'garbage', 300, 1_700_000_000)).toBe(false);
  });
});
