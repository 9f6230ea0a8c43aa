import { pino, type Logger } from 'pino';

/** Structured logs (JSON lines on stdout). Credentials never reach a log line: see the redact paths. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-gateway-api-key"]',
        'req.headers["x-gateway-config"]',
        'req.headers["api-key"]',
        'req.headers["x-api-key"]',
        '*.api_key',
        '*.apiKey',
        '*.secret',
        '*.password',
        'config',
      ],
      censor: '[REDACTED]',
    },
  });
}
