/**
 * An upstream on loopback that speaks OpenAI's wire format with whatever a test gives it: each call's JSON
 * body is read and the test's `reply` chooses the answer, a whole JSON body or server-sent events.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A whole answer (the body as sent, with `headers` besides its content type), or a stream of events,
 * each with its `event:` name where given, ended by `data: [DONE]` when `done`. */
export type WireReply =
  | { json: string; headers?: Record<string, string> }
  | { events: Array<{ event?: string; data: string }>; done: boolean };

export interface WireUpstream {
  /** `http://127.0.0.1:PORT`, to use as `custom_host`. */
  url: string;
  close(): Promise<void>;
}

export async function startWireUpstream(
  reply: (call: { path: string; body: any }) => WireReply, // eslint-disable-line @typescript-eslint/no-explicit-any -- request JSON
): Promise<WireUpstream> {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (part: Buffer) => (raw += part.toString()));
    req.on('end', () => {
      const answer = reply({ path: req.url ?? '/', body: JSON.parse(raw) });
      if ('json' in answer) {
        res.writeHead(200, { 'content-type': 'application/json', ...answer.headers });
        res.end(answer.json);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const { event, data } of answer.events) {
        res.write(`${event === undefined ? '' : `event: ${event}\n`}data: ${data}\n\n`);
      }
      res.end(answer.done ? 'data: [DONE]\n\n' : undefined);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
