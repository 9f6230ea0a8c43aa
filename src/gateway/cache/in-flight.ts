/**
 * Identical cacheable requests in flight on this node at once (docs/cache.md): the first to miss the cache
 * (the leader) asks the provider, and the others wait for the answer it keeps and are answered from it, as
 * from the cache, rather than each asking the provider the same question. A flight whose leader keeps no
 * answer (a failure, an answer the output checks denied) lands empty: the requests that waited for it then
 * ask the provider themselves. Flights are keyed by the simple cache's key, so they are as apart as its
 * entries (workspace, namespace, model, body…).
 */
import { parseAnswer, serializeAnswer, type CachedAnswer } from './response-cache.js';

export interface Flight {
  /** The leader's answer as the cache keeps it, or undefined when it keeps none. The first call counts. */
  land(answer: CachedAnswer | undefined): void;
  /** Later requests find the answer in the cache, not here. */
  end(): void;
}

export class InFlightAnswers {
  /** The answer's stored text by key, as the memory cache keeps it: every waiter reads a copy of its own. */
  private readonly flights = new Map<string, Promise<string | undefined>>();

  /** The answer of the flight under way for `key`, or undefined when there is none. */
  landing(key: string): Promise<CachedAnswer | undefined> | undefined {
    return this.flights.get(key)?.then((text) => (text === undefined ? undefined : parseAnswer(text)));
  }

  /** Starts the flight of `key`: the caller is its leader, and must land it. */
  start(key: string): Flight {
    let resolve: (text: string | undefined) => void = () => undefined;
    const landing = new Promise<string | undefined>((settle) => (resolve = settle));
    this.flights.set(key, landing);
    const end = () => {
      if (this.flights.get(key) === landing) this.flights.delete(key);
    };
    return {
      land: (answer) => {
        resolve(answer && serializeAnswer(answer));
        if (answer === undefined) end();
      },
      end,
    };
  }

  /** Flights under way, for tests. */
  get size(): number {
    return this.flights.size;
  }
}
