import { describe, expect, it } from 'vitest';
import { bodyForLog } from '../../src/gateway/log-record.js';
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
});
