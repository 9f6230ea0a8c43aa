/**
 * OTLP's protobuf encoding of an export request (opentelemetry-proto's trace.proto), read back into the
 * shape of its JSON encoding (ids as hex, times as decimal text, `AnyValue` as `{stringValue: …}` and so
 * on), so that a test receiver reads both encodings the same way. Reads the fields the gateway writes;
 * skips any other.
 */

type Field = { wireType: number; value: bigint | number | Buffer };

/** A message's fields by number, each in the order met. */
function fields(bytes: Buffer): Map<number, Field[]> {
  const out = new Map<number, Field[]>();
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = bytes[pos++];
      if (byte === undefined) throw new Error('truncated varint');
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return result;
      shift += 7n;
    }
  };
  while (pos < bytes.length) {
    const key = Number(varint());
    const number = key >>> 3;
    const wireType = key & 7;
    let value: Field['value'];
    if (wireType === 0) value = varint();
    else if (wireType === 1) {
      value = bytes.readBigUInt64LE(pos);
      pos += 8;
    } else if (wireType === 2) {
      const length = Number(varint());
      value = bytes.subarray(pos, pos + length);
      if (value.length !== length) throw new Error('truncated field');
      pos += length;
    } else if (wireType === 5) {
      value = bytes.readUInt32LE(pos);
      pos += 4;
    } else throw new Error(`unexpected wire type ${wireType}`);
    const list = out.get(number) ?? [];
    list.push({ wireType, value });
    out.set(number, list);
  }
  return out;
}

const all = (message: Map<number, Field[]>, number: number) => message.get(number) ?? [];
const one = (message: Map<number, Field[]>, number: number) => message.get(number)?.at(-1)?.value;
const messages = (message: Map<number, Field[]>, number: number) =>
  all(message, number).map((field) => fields(field.value as Buffer));
const text = (value: Field['value'] | undefined) => (value as Buffer | undefined)?.toString('utf8');
const hex = (value: Field['value'] | undefined) => (value as Buffer | undefined)?.toString('hex');

function anyValue(message: Map<number, Field[]>): Record<string, unknown> {
  if (message.has(1)) return { stringValue: text(one(message, 1)) };
  if (message.has(2)) return { boolValue: one(message, 2) === 1n };
  if (message.has(3)) return { intValue: String(BigInt.asIntN(64, one(message, 3) as bigint)) };
  if (message.has(4)) {
    const raw = Buffer.alloc(8);
    raw.writeBigUInt64LE(one(message, 4) as bigint);
    return { doubleValue: raw.readDoubleLE() };
  }
  if (message.has(5)) {
    const [array] = messages(message, 5);
    return { arrayValue: { values: messages(array, 1).map(anyValue) } };
  }
  return {};
}

function keyValues(message: Map<number, Field[]>, number: number) {
  return messages(message, number).map((entry) => ({
    key: text(one(entry, 1)) as string,
    value: anyValue(messages(entry, 2)[0] ?? new Map()),
  }));
}

/** An `ExportTraceServiceRequest` in protobuf, as its OTLP JSON object. */
export function decodeTraceRequest(bytes: Buffer) {
  const request = fields(bytes);
  return {
    resourceSpans: messages(request, 1).map((resourceSpans) => ({
      resource: { attributes: keyValues(messages(resourceSpans, 1)[0] ?? new Map(), 1) },
      scopeSpans: messages(resourceSpans, 2).map((scopeSpans) => ({
        scope: { name: text(one(messages(scopeSpans, 1)[0] ?? new Map(), 1)) },
        spans: messages(scopeSpans, 2).map((span) => {
          const status = messages(span, 15)[0] ?? new Map();
          return {
            traceId: hex(one(span, 1)),
            spanId: hex(one(span, 2)),
            parentSpanId: hex(one(span, 4)),
            name: text(one(span, 5)),
            kind: Number(one(span, 6) ?? 0n),
            startTimeUnixNano: String(one(span, 7)),
            endTimeUnixNano: String(one(span, 8)),
            attributes: keyValues(span, 9),
            status: { code: Number(one(status, 3) ?? 0n), message: text(one(status, 2)) },
            flags: one(span, 16) as number | undefined,
          };
        }),
      })),
    })),
  };
}
