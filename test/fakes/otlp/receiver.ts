/**
 * An OTLP/HTTP trace receiver on 127.0.0.1: takes `POST /v1/traces` in either of OTLP's encodings
 * (protobuf or JSON, by the request's content type), as a collector does, and keeps every span with its
 * resource's and its own attributes flattened.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeTraceRequest } from './protobuf.js';

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** W3C trace flags in bits 0–7; 0x100 "has is-remote", 0x200 "parent is remote". */
  flags: number;
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** The request headers of each export (its encoding: `content-type`). */
  exports: Array<Record<string, string | string[] | undefined>>;
  /** Waits until `predicate` holds for the spans received (10 s at most). */
  waitFor(predicate: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

function valueOf(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const exports: OtlpReceiver['exports'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const type = req.headers['content-type'] ?? '';
      const protobuf = type === 'application/x-protobuf';
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !(protobuf || type.includes('json'))) {
        res.writeHead(415).end();
        return;
      }
      exports.push(req.headers);
      const raw = Buffer.concat(chunks);
      const body = (protobuf ? decodeTraceRequest(raw) : JSON.parse(raw.toString('utf8'))) as {
        resourceSpans?: Array<{
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }>;
        }>;
      };
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId as string,
              spanId: span.spanId as string,
              parentSpanId: (span.parentSpanId as string | undefined) || undefined,
              name: span.name as string,
              kind: span.kind as number,
              startNs: BigInt(span.startTimeUnixNano as string),
              endNs: BigInt(span.endTimeUnixNano as string),
              attributes: attributesOf(span.attributes as KeyValue[]),
              statusCode: (span.status as { code?: number } | undefined)?.code ?? 0,
              flags: (span.flags as number | undefined) ?? 0,
              resource,
            });
          }
        }
      }
      // An empty ExportTraceServiceResponse: full success.
      if (protobuf) res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports,
    async waitFor(predicate) {
      const deadline = Date.now() + 10_000;
      while (!predicate(spans)) {
        if (Date.now() > deadline)
          throw new Error(`spans not received; have: ${spans.map((s) => s.name).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return spans;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
