/**
 * Headers of one HTTP connection rather than of the message (hop-by-hop, RFC 9110 §7.6.1), with `host`
 * and `content-length`, which describe the connection and the body as sent: a proxy writes its own.
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);
