import { describe, expect, it } from 'vitest';
import { bodyForLog } from '../../src/gateway/log-record.js';
import { mayNameSecret, redact } from '../../src/observability/redact.js';
import { SerializedJson } from '../../src/store/serialized-json.js';

const bodies = { enabled: true, maxBytes: 65_536 };
const stored = (value: unknown) => (value instanceof SerializedJson ? JSON.parse(value.text) : value);

describe('bodies as logged', () => {
  it("store the upstream's own text when redaction finds nothing to change", () => {
    const text = '{ "id": "chatcmpl-1",  "choices": [] }';
    const logged = bodyForLog(JSON.parse(text), bodies, text);
    expect(logged).toBeInstanceOf(SerializedJson);
    expect((logged as SerializedJson).text).toBe(text);
  });

  it('are redacted even when the text is given, when the body holds a secret', () => {
    const text = '{"id":"x","api_key":"sk-live-123","nested":{"authorization":"Bearer abc"}}';
    const logged = bodyForLog(JSON.parse(text), bodies, text);
    expect(JSON.stringify(stored(logged))).not.toContain('sk-live-123');
    expect(JSON.stringify(stored(logged))).not.toContain('Bearer abc');
    expect(stored(logged)).toMatchObject({ id: 'x', api_key: '[REDACTED]' });
  });

  it('are cut to a summary when too large, text or not', () => {
    const body = { content: 'x'.repeat(100) };
    const text = JSON.stringify(body);
    const logged = bodyForLog(body, { enabled: true, maxBytes: 50 }, text);
    expect(logged).toMatchObject({ truncated: true, bytes: text.length });
  });

  it('are measured in UTF-8 bytes, and cut with no character split', () => {
    // 20 characters, 80 bytes: within 50 by length, not by bytes.
    const body = { content: '😀'.repeat(10) };
    const text = JSON.stringify(body);
    const logged = bodyForLog(body, { enabled: true, maxBytes: 50 }, text) as { bytes: number; head: string };
    expect(logged).toMatchObject({ truncated: true, bytes: Buffer.byteLength(text) });
    expect(Buffer.byteLength(logged.head)).toBeLessThanOrEqual(50);
    expect(logged.head).toBe(text.slice(0, logged.head.length));
    expect(/[\uD800-\uDBFF]$/.test(logged.head)).toBe(false);
  });

  it('serialise one body once for the records that carry it, and a new body anew', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const first = bodyForLog(body, bodies);
    expect(bodyForLog(body, bodies)).toBe(first);
    const other = { ...body, model: 'n' };
    expect(stored(bodyForLog(other, bodies))).toEqual(other);
    expect(bodyForLog(body, { enabled: true, maxBytes: 10 })).toMatchObject({ truncated: true });
  });

  it('are not stored when body logging is off', () => {
    expect(bodyForLog({ a: 1 }, { enabled: false, maxBytes: 65_536 }, '{"a":1}')).toBeNull();
  });

  it('are redacted when a secret key is spelt with escapes in the text', () => {
    const text = '{"model":"m","api\\u005fkey":"sk-live-123","x":{"PASS\\u0057ORD":"hunter2"}}';
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(body)).toContain('api_key');
    const logged = JSON.stringify(stored(bodyForLog(body, bodies, text)));
    expect(logged).not.toContain('sk-live-123');
    expect(logged).not.toContain('hunter2');
  });
});

describe('mayNameSecret', () => {
  it('is true for any text whose parsed body redaction would change', () => {
    // Keys in every spelling JSON allows for them (case, escapes, separators), at any depth.
    const keys = [
      'api_key',
      'API-KEY',
      'apikey',
      'x_secret_y',
      'Password',
      'authorization',
      'refresh_token',
      'idToken',
      'bearer',
      'credentials',
      'private-key',
    ];
    const escaped = (key: string) =>
      [...key].map((c, i) => (i === 1 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('');
    for (const key of keys) {
      for (const spelt of [key, escaped(key)]) {
        const text = `{"a":[{"b":{"${spelt}":"v"}}]}`;
        const body = JSON.parse(text);
        expect(redact(body)).not.toBe(body);
        expect(mayNameSecret(text)).toBe(true);
      }
    }
  });

  it('is false for an ordinary request, whose body redaction leaves as it is', () => {
    const text = JSON.stringify({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Say hello\n"quoted"' }],
    });
    expect(mayNameSecret(text)).toBe(false);
    const body = JSON.parse(text);
    expect(redact(body)).toBe(body);
  });
});
