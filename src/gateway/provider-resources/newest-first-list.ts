/**
 * A list a provider gives oldest first (Azure OpenAI's events and checkpoints of a fine-tuning job), paged
 * newest first as OpenAI pages it. Paging the provider's own would start the list at the job's first
 * event: the list is read whole (up to MAX_PAGES pages of 100), turned round (unless its times show it
 * newest first already), and paged here, `after` an item's id; a longer list is answered from the 10,000
 * items read, and says so. A reading is kept a while, bounded in lists and bytes, so that a client paging
 * through a long list (the SDK's auto-pager: a page of 20 at a time) does not have it read whole for
 * every page, nor a running job's first page have it read whole each time (it is read on from the kept
 * reading's newest item), and a reading under way is shared by the requests for the list that come meanwhile.
 */
import { LRUCache } from 'lru-cache';
import { CallAbort, type AbortSignalLike } from '../../core/abort.js';
import type { GatewayDeps } from '../deps.js';
import { ListOrder } from './list-order.js';
import { listPages } from './resource-client.js';
import type { ResourceTarget } from './resource-target.js';

type Json = Record<string, unknown>;

/** Most pages of 100 read of one list. */
const MAX_PAGES = 100;

/** A list as last read, newest first; `complete` unless the provider had more than MAX_PAGES pages;
 * `settled` when it was read once the job was seen finished, and holds the list's last item. `bytes`:
 * what it takes in memory, estimated (HEAP_PER_JSON_CHAR). */
interface Reading {
  items: Json[];
  complete: boolean;
  settled: boolean;
  bytes: number;
  /** The provider gave it oldest first (it was turned round): its newest end is read on from its newest
   * item, `after` it. */
  turned: boolean;
}

/**
 * Bytes of heap a list's items take per character of the JSON they came in. Measured on Node 20 with
 * 10,000 items of Azure's shapes (metrics and message events, checkpoints), parsed from pages of 100 and
 * the pages' text let go: 1.9 to 2.6 (the item objects, and the pages' text, which the strings V8 parsed
 * from it keep alive); rounded up.
 */
const HEAP_PER_JSON_CHAR = 3;

/** Readings kept, by list: a few hundred lists of at most 10,000 items, 64 MiB of heap in all (estimated
 * from the JSON the provider sent, which is known as each page is read, and not written out again to
 * weigh a reading), for 10 minutes. */
const readings = new LRUCache<string, Reading>({
  max: 500,
  maxSize: 64 * 1024 * 1024,
  sizeCalculation: (reading, key) => Math.max(1, reading.bytes + key.length),
  ttl: 10 * 60_000,
});

/** A reading under way, shared by the requests for its list that come while it is read: cut (and no
 * longer shared) once every one of them has gone. `settled`: started once the job was seen finished. */
interface Flight {
  reading: Promise<Reading>;
  abort: CallAbort;
  waiting: number;
  settled: boolean;
}

/** Readings under way, by list. */
const flights = new Map<string, Flight>();

export interface NewestFirstList {
  /** The list's own key (the gateway's job and the list). */
  key: string;
  /** The provider's path of the list. */
  path: string;
  /** The list will not change (the job has finished): a reading of it answers its first page too. */
  settled: boolean;
}

/**
 * A page of the list, newest first. The first page is read afresh unless the list is settled and was
 * read so (a reading made while the job ran lacks what the job logged as it finished): from the newest item
 * of a whole reading the provider gave oldest first (its pages after that item, the items the job has added
 * since, put before the kept ones), else whole; a page
 * `after` an item comes from the reading that holds that item, whether or not the list is settled, as the
 * list grows only at its newest end: what is older than an item seen does not change. An `after` the list
 * does not hold answers an empty page. `truncated`: the list was not read to its end, and what the page
 * holds are the newest of the items read, not the newest of the list; `has_more` is then true on every
 * page, as there are items the gateway could not give.
 */
export async function newestFirstPage(
  deps: GatewayDeps,
  target: ResourceTarget,
  list: NewestFirstList,
  query: { after?: string; limit: number },
  signal?: AbortSignalLike,
): Promise<{ data: Json[]; has_more: boolean; truncated: boolean }> {
  const kept = readings.get(list.key);
  const usable =
    kept && (query.after === undefined ? kept.settled : kept.items.some((item) => item.id === query.after));
  const { items, complete } = usable ? kept : await sharedRead(deps, target, list, kept, signal);
  const truncated = !complete;
  const start = query.after === undefined ? 0 : items.findIndex((item) => item.id === query.after) + 1;
  if (start === 0 && query.after !== undefined) return { data: [], has_more: truncated, truncated };
  return {
    data: items.slice(start, start + query.limit),
    has_more: truncated || start + query.limit < items.length,
    truncated,
  };
}

/** The list's reading under way, or one started: `signal` (a request's) ends this request's wait for it,
 * and the reading itself once no request is left waiting. A request for a settled list does not share a
 * reading started while the job ran, which may lack the job's last items. */
async function sharedRead(
  deps: GatewayDeps,
  target: ResourceTarget,
  list: NewestFirstList,
  kept: Reading | undefined,
  signal: AbortSignalLike | undefined,
): Promise<Reading> {
  let flight = flights.get(list.key);
  if (!flight || (list.settled && !flight.settled)) {
    const abort = new CallAbort();
    const started: Flight = {
      reading: readOn(deps, target, list, kept, abort),
      abort,
      waiting: 0,
      settled: list.settled,
    };
    const end = () => {
      if (flights.get(list.key) === started) flights.delete(list.key);
    };
    started.reading.then(end, end);
    flights.set(list.key, started);
    flight = started;
  }
  const joined = flight;
  joined.waiting += 1;
  const leave = () => {
    joined.waiting -= 1;
    if (joined.waiting > 0) return;
    if (flights.get(list.key) === joined) flights.delete(list.key);
    joined.abort.abort();
  };
  if (signal?.aborted) leave();
  else signal?.addEventListener('abort', leave, { once: true });
  try {
    return await joined.reading;
  } finally {
    signal?.removeEventListener('abort', leave);
  }
}

/**
 * The list read on from `kept`'s newest item when `kept` was read whole and turned round: only the items the
 * job added since are read (the list grows at its newest end), put before the kept ones, within the bound of
 * a whole reading. Read whole when there is no such reading, or when what comes after its newest item holds
 * an item it holds already (a list that was not oldest first after all).
 */
async function readOn(
  deps: GatewayDeps,
  target: ResourceTarget,
  list: NewestFirstList,
  kept: Reading | undefined,
  signal: AbortSignalLike | undefined,
): Promise<Reading> {
  const newest = kept?.items[0]?.id;
  if (!kept || !kept.complete || !kept.turned || typeof newest !== 'string') {
    return read(deps, target, list, signal);
  }
  const added: Json[] = [];
  let length = 0;
  const held = Math.ceil(kept.items.length / 100);
  const pages = listPages(deps, target, list.path, Math.max(MAX_PAGES - held, 1), signal, newest);
  let page = await pages.next();
  for (; !page.done; page = await pages.next()) {
    added.push(...page.value.data);
    length += page.value.length;
  }
  const ids = new Set(kept.items.map((item) => item.id));
  if (added.some((item) => ids.has(item.id))) return read(deps, target, list, signal);
  const reading: Reading = {
    items: [...added.reverse(), ...kept.items],
    complete: page.value,
    settled: list.settled,
    bytes: kept.bytes + length * HEAP_PER_JSON_CHAR,
    turned: true,
  };
  keep(list, reading);
  return reading;
}

/** The list read whole and turned round, and kept. A list whose times show it newest first already is
 * kept as it came: Azure's references give the order (oldest first) by examples of dated API versions
 * alone, and none for its undated v1 API, whose order the gateway takes from the list itself. */
async function read(
  deps: GatewayDeps,
  target: ResourceTarget,
  list: NewestFirstList,
  signal: AbortSignalLike | undefined,
): Promise<Reading> {
  const items: Json[] = [];
  let length = 0;
  const pages = listPages(deps, target, list.path, MAX_PAGES, signal);
  let page = await pages.next();
  for (; !page.done; page = await pages.next()) {
    items.push(...page.value.data);
    length += page.value.length;
  }
  const order = new ListOrder();
  for (const item of items) order.see(item.created_at);
  const reading = {
    items: order.newestFirst ? items : items.reverse(),
    complete: page.value,
    settled: list.settled,
    bytes: length * HEAP_PER_JSON_CHAR,
    turned: !order.newestFirst,
  };
  keep(list, reading);
  return reading;
}

function keep(list: NewestFirstList, reading: Reading): void {
  // A reading started while the job ran and ending after one made once it finished does not replace it.
  if (reading.settled || !readings.peek(list.key)?.settled) readings.set(list.key, reading);
}
