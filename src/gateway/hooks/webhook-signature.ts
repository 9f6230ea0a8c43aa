/**
 * The signature on a webhook check's body, shaped like the widely used webhook signatures (Stripe,
 * Standard Webhooks): `x-gateway-signature: t=<unix seconds>,v1=<hex HMAC-SHA256>` over `<t>.<body>`,
 * keyed with GATEWAY_HOOKS_WEBHOOK_SECRET. The timestamp inside the signed text lets a receiver refuse
 * replays (docs/guardrails.md shows the check a receiver makes).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-gateway-signature';

export function signWebhookBody(
  secret: string,
  body: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): string {
  const mac = createHmac('sha256', secret).update(`${nowSeconds}.${body}`).digest('hex');
  return `t=${nowSeconds},v1=${mac}`;
}

/** A receiver's check: the header is well formed, the MAC matches, and it is at most `toleranceSeconds` old. */
export function verifyWebhookSignature(
  secret: string,
  body: string,
  header: string,
  toleranceSeconds = 300,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const fields = new Map(
    header.split(',').map((part) => {
      const at = part.indexOf('=');
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
    }),
  );
  const t = Number(fields.get('t'));
  const given = fields.get('v1');
  if (!Number.isInteger(t) || !given || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest();
  const actual = Buffer.from(given, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
