/**
 * Identical cacheable requests in flight on this node at once (docs/cache.md): the first to miss the cache
 * (the leader) asks the provider, and the others wait for the answer it keeps and are answered from it, as
 * from the cache, rather than each asking the provider the same question. A flight whose leader keeps no
 * answer (a failure, an answer the output checks denied) lands empty: the requests that waited for it then
 * ask the provider themselves. Flights are keyed by the simple cache's key (the semantic cache's exact
 * key), so they are as apart as its entries (workspace, namespace, model, body…).
 */
import { parseAnswer, serializeAnswer, type CachedAnswer } from './response-cache.js';

export interface Flight {
  /** The leader's answer as the cache keeps it (and the semantic entry it is stored as), or undefined when
   * it keeps none. The first call counts. */
  land(answer: CachedAnswer | undefined, entryId?: string): void;
  /** Later requests find the answer in the cache, not here. */
  end(): void;
}

export interface Landed {
  answer: CachedAnswer;
  /** The semantic cache's entry the answer is stored as, if any. */
  entryId: string | undefined;
}

interface Stored {
  /** As the memory cache keeps an answer: every waiter reads a copy of its own. */
  text: string;
  entryId: string | undefined;
}

export class InFlightAnswers {
  private readonly flights = new Map<string, Promise<Stored | undefined>>();

  /** The answer of the flight under way for `key`, or undefined when there is none. */
  landing(key: string): Promise<Landed | undefined> | undefined {
    return this.flights.get(key)?.then((stored) => {
      const answer = stored && parseAnswer(stored.text);
      return answer && { answer, entryId: stored.entryId };
    });
  }

  /** Starts the flight of `key`: the caller is its leader, and must land it. */
  start(key: string): Flight {
    let resolve: (stored: Stored | undefined) => void = () => undefined;
    const landing = new Promise<Stored | undefined>((settle) => (resolve = settle));
    this.flights.set(key, landing);
    const end = () => {
      if (this.flights.get(key) === landing) this.flights.delete(key);
    };
    return {
      land: (answer, entryId) => {
        resolve(answer && { text: serializeAnswer(answer), entryId });
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
