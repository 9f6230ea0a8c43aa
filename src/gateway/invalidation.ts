/**
 * Cross-node cache invalidation. A change committed through one node's store (a key revoked, a virtual
 * key, config, guardrail, prompt, partial or rate-limit policy changed, a workspace deleted) is published on a Redis channel; every node drops the matching
 * entries of its in-memory lookup cache at once instead of waiting for their TTL. The semantic cache
 * tells the other nodes on the same channel of the entries it added or removed (cache/semantic/).
 */
import type { StoreChange } from '../store/types.js';

/** `all`: everything may be stale (this node missed what was published while its subscription was down).
 * `api-keys`: with `keyId`, one key was changed (revoked, rotated, updated) or deleted; with
 * `workspaceId`, a workspace's keys went with it; with `unknownOnly`, a key was created, which makes stale
 * only the values held as unknown; with none of them, every cached key. A node of an earlier release
 * reads none of these fields and drops every cached key, as it did. */
export type InvalidationEvent =
  | { kind: 'api-keys'; unknownOnly?: true; keyId?: string; workspaceId?: string }
  | { kind: 'workspace'; workspaceId: string }
  | { kind: 'all' };

/** Semantic cache entries a node added or removed in one partition. */
export interface SemanticCacheEvent {
  kind: 'semantic-cache';
  op: 'added' | 'removed';
  workspaceId: string;
  partition: string;
  ids: string[];
}

/** What travels on the channel. */
export type BusEvent = InvalidationEvent | SemanticCacheEvent;

/** What a store change makes stale in the lookup caches: the cached entries of the key changed (they
 * are cached by value, which the store does not keep: found by the key's id), or a workspace's
 * credentials, configs, guardrails, prompts, partials and rate-limit policies; a deleted workspace, both
 * (its keys found by their workspace). A created key changes no key held: only a value held as unknown may
 * now be a key. */
export function invalidationFor(change: StoreChange): InvalidationEvent[] {
  switch (change.resource) {
    case 'api_key':
      return [
        change.action === 'created'
          ? { kind: 'api-keys', unknownOnly: true }
          : { kind: 'api-keys', keyId: change.id },
      ];
    case 'credential':
    case 'config':
    case 'guardrail':
    case 'prompt':
    case 'prompt_partial':
    case 'rate_limit_policy':
      return [{ kind: 'workspace', workspaceId: change.workspace_id }];
    case 'workspace':
      return change.action === 'deleted'
        ? [
            { kind: 'api-keys', workspaceId: change.workspace_id },
            { kind: 'workspace', workspaceId: change.workspace_id },
          ]
        : [];
  }
}

export interface InvalidationBus {
  publish(event: BusEvent): void;
  close(): Promise<void>;
  /** Ends at once what `close` waits for (the publisher's QUIT), its connections destroyed. */
  destroy(): void;
}

/** The most distinct invalidations kept to publish again; past it they are kept as one `all`, which
 * drops every cached lookup on the other nodes (as their own lost subscription does). */
const MAX_UNSENT = 100;
const EVERYTHING = JSON.stringify({ kind: 'all' } satisfies InvalidationEvent);
/** How soon an announcement that failed on a connection still ready is published again. */
const UNSENT_RETRY_MS = 1_000;

/** What publishes the bus's announcements: a Redis connection (`PUBLISH` on the channel). */
export interface AnnouncementPublisher {
  publish(message: string): Promise<unknown>;
  /** Whether the connection is ready: a failure then is a timeout, and no new 'ready' comes. */
  ready(): boolean;
  onError(error: Error): void;
}

export interface Announcer {
  announce(event: BusEvent): void;
  /** Publishes again what Redis did not take: call it when the connection is ready. */
  resend(): void;
  close(): void;
}

/**
 * Invalidations Redis did not take (the connection lost for longer than the client keeps a command
 * queued, or a command timed out), by their message: published again as soon as the connection is ready,
 * so a change made while this node was cut from Redis still reaches the nodes that stayed connected, which
 * would otherwise serve what it made stale until their cache's lifetime ran out. An invalidation only
 * drops: one sent twice (its first reply lost) or out of order does no harm, and past `MAX_UNSENT`
 * distinct ones a single `all` stands for them, so none is ever forgotten.
 *
 * Semantic cache events are not kept: the nodes that hear them treat them as hints (an added entry is read
 * from the store, a hit is read back by id and must still be there), so one lost costs a miss, never a
 * wrong answer, as when the receiving node's own subscription is cut. Kept, a busy node's would be
 * thousands after an outage, unique each, and sent again out of their order.
 */
export function createAnnouncer(publisher: AnnouncementPublisher): Announcer {
  let unsent = new Set<string>();
  let retry: NodeJS.Timeout | undefined;
  let closed = false;
  const keep = (message: string) => {
    if (unsent.has(message) || unsent.has(EVERYTHING)) return;
    if (unsent.size < MAX_UNSENT) unsent.add(message);
    else unsent = new Set([EVERYTHING]);
  };
  // Logged once per announcement: not again each time a retry fails while Redis stays away.
  const send = (message: string, again: boolean, keptIfUnsent: boolean) => {
    publisher.publish(message).catch((err: Error) => {
      if (!again) publisher.onError(err);
      if (closed || !keptIfUnsent) return;
      keep(message);
      // A command that timed out on a connection still ready: no new 'ready' comes to send it again.
      if (publisher.ready()) retry ??= setTimeout(resend, UNSENT_RETRY_MS).unref();
    });
  };
  const resend = () => {
    clearTimeout(retry);
    retry = undefined;
    if (closed) return;
    const messages = [...unsent];
    unsent.clear();
    for (const message of messages) send(message, true, true);
  };
  return {
    announce: (event) => send(JSON.stringify(event), false, event.kind !== 'semantic-cache'),
    resend,
    close() {
      closed = true;
      clearTimeout(retry);
    },
  };
}

function parseEvent(message: string): BusEvent | undefined {
  try {
    const event = JSON.parse(message) as Partial<
      Record<keyof SemanticCacheEvent | 'unknownOnly' | 'keyId', unknown>
    >;
    if (event.kind === 'api-keys') {
      if (event.unknownOnly === true) return { kind: 'api-keys', unknownOnly: true };
      if (typeof event.keyId === 'string') return { kind: 'api-keys', keyId: event.keyId };
      if (typeof event.workspaceId === 'string') return { kind: 'api-keys', workspaceId: event.workspaceId };
      return { kind: 'api-keys' };
    }
    if (event.kind === 'all') return { kind: 'all' };
    if (event.kind === 'workspace' && typeof event.workspaceId === 'string') {
      return { kind: 'workspace', workspaceId: event.workspaceId };
    }
    if (
      event.kind === 'semantic-cache' &&
      (event.op === 'added' || event.op === 'removed') &&
      typeof event.workspaceId === 'string' &&
      typeof event.partition === 'string' &&
      Array.isArray(event.ids) &&
      event.ids.every((id) => typeof id === 'string')
    ) {
      const { op, workspaceId, partition } = event;
      return { kind: 'semantic-cache', op, workspaceId, partition, ids: event.ids as string[] };
    }
  } catch {
    // Not ours: ignored.
  }
  return undefined;
}

export async function createRedisInvalidationBus(options: {
  url: string;
  prefix: string;
  /** How long a command waits for Redis's answer; a silent Redis must not hold a publish or the close. */
  commandTimeoutMs: number;
  onEvent: (event: BusEvent) => void;
  /** Subscribed again after the connection was lost: what was published meanwhile never arrived. */
  onResubscribed: () => void;
  onError: (error: Error) => void;
}): Promise<InvalidationBus> {
  const channel = `${options.prefix}invalidate`;
  // Loaded here, not at start: only a gateway with REDIS_URL has an invalidation bus.
  const { Redis } = await import('ioredis');
  const commandTimeout = options.commandTimeoutMs;
  const publisher = new Redis(options.url, { lazyConnect: true, maxRetriesPerRequest: 2, commandTimeout });
  // ioredis's own resubscription after a reconnect sends SUBSCRIBE with no one waiting for its answer: a
  // connection closed before Redis answers (the gateway closing, Redis going again) rejects it unhandled.
  // The bus subscribes again itself.
  const subscriber = new Redis(options.url, { lazyConnect: true, autoResubscribe: false, commandTimeout });
  let closed = false;
  publisher.on('error', options.onError);
  subscriber.on('error', options.onError);
  subscriber.on('message', (from: string, message: string) => {
    if (from !== channel) return;
    const event = parseEvent(message);
    if (event) options.onEvent(event);
  });
  // 'ready' after the start's own subscription: a new connection, not yet subscribed.
  let starting = true;
  subscriber.on('ready', () => {
    if (starting) return;
    subscriber.subscribe(channel).then(options.onResubscribed, (err: Error) => {
      if (!closed) options.onError(err);
    });
  });
  // Redis down at the start does not keep the node from starting, as it does not stop one that runs: the
  // clients go on connecting by themselves, and the subscription is made on the first connection that is
  // ready (the node then forgets what it cached meanwhile, as after any lost subscription).
  publisher.connect().catch(() => undefined);
  try {
    await subscriber.connect();
    await subscriber.subscribe(channel);
  } catch (error) {
    options.onError(error as Error);
  } finally {
    starting = false;
  }
  const announcer = createAnnouncer({
    publish: (message) => publisher.publish(channel, message),
    ready: () => publisher.status === 'ready',
    onError: options.onError,
  });
  publisher.on('ready', announcer.resend);
  return {
    publish: announcer.announce,
    async close() {
      closed = true;
      announcer.close();
      subscriber.disconnect();
      await publisher.quit().catch(() => publisher.disconnect());
    },
    destroy() {
      closed = true;
      announcer.close();
      subscriber.disconnect();
      publisher.disconnect();
    },
  };
}
