/**
 * A TCP proxy in front of the test Redis that can fail the way a production Redis does: `refuse` (down:
 * open connections are cut and new ones closed at once), `stall` (a partition that leaves connections
 * open but carries nothing either way), a connection lost between a command and its reply (`cutOn`:
 * Redis ran the command, the client never hears so), and a slow network (`delayReplies`).
 */
import { connect, createServer, type Socket } from 'node:net';
import { redisUrl } from './redis.js';

export type RedisProxyMode = 'pass' | 'refuse' | 'stall';

export interface RedisProxy {
  url: string;
  set(mode: RedisProxyMode): void;
  /** Switch to `stall` as soon as a client sends what `matches`, before carrying it. */
  stallOn(matches: (sent: string) => boolean): void;
  /** Carry what a client sends that `matches` to Redis, then cut that client's connection before Redis's
   * reply reaches it, once; new connections pass as before. */
  cutOn(matches: (sent: string) => boolean): void;
  /** Carry commands at once and Redis's replies `ms` later (0: at once again). */
  delayReplies(ms: number): void;
  close(): Promise<void>;
}

export async function startRedisProxy(): Promise<RedisProxy> {
  const target = new URL(redisUrl());
  const sockets = new Set<Socket>();
  let mode: RedisProxyMode = 'pass';
  let stallTrigger: ((sent: string) => boolean) | undefined;
  let cutTrigger: ((sent: string) => boolean) | undefined;
  let replyDelayMs = 0;
  const server = createServer((client) => {
    if (mode === 'refuse') return client.destroy();
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    // Set once this connection carried the command to cut after: Redis's reply ends the connection instead.
    let cutting = false;
    client.on('data', (data: Buffer) => {
      if (stallTrigger?.(data.toString('latin1'))) {
        stallTrigger = undefined;
        mode = 'stall';
      }
      if (cutTrigger?.(data.toString('latin1'))) {
        cutTrigger = undefined;
        cutting = true;
      }
      if (mode === 'pass') upstream.write(data);
    });
    upstream.on('data', (data) => {
      if (cutting) {
        client.destroy();
        upstream.destroy();
      } else if (mode === 'pass') {
        // One delay for every reply: they still arrive in order.
        if (replyDelayMs > 0) setTimeout(() => client.write(data), replyDelayMs);
        else client.write(data);
      }
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    set(next) {
      mode = next;
      if (next === 'refuse') for (const socket of sockets) socket.destroy();
    },
    stallOn(matches) {
      stallTrigger = matches;
    },
    cutOn(matches) {
      cutTrigger = matches;
    },
    delayReplies(ms) {
      replyDelayMs = ms;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
