/**
 * A store's calls held at a gate, for the tests of what another request does meanwhile: a held call waits
 * until `release`; `reached` resolves once one waits; `restore` puts the store back as it was.
 */
import type { Repositories, Store } from '../../src/store/types.js';

export interface StoreHold {
  reached: Promise<void>;
  release: () => void;
  restore: () => void;
}

function gate(): { reached: Promise<void>; release: () => void; pass: () => Promise<void> } {
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    reached,
    release,
    pass: async () => {
      reach();
      await released;
    },
  };
}

/** Holds every call of the store's `method`, on the store itself or on a transaction's repositories. */
export function holdStore(store: Store, method: keyof Repositories): StoreHold {
  const original = { [method]: store[method], transaction: store.transaction };
  const { reached, release, pass } = gate();
  const held = <T extends Repositories>(repositories: T): T => {
    const call = (repositories[method] as (...args: unknown[]) => Promise<unknown>).bind(repositories);
    return {
      ...repositories,
      [method]: async (...args: unknown[]) => {
        await pass();
        return call(...args);
      },
    };
  };
  Object.assign(store, held(store));
  store.transaction = (work) => original.transaction((tx) => work(held(tx)));
  return { reached, release, restore: () => Object.assign(store, original) };
}

/** Holds the store's next transaction before it begins; the others go on. */
export function holdNextTransaction(store: Store): StoreHold {
  const transaction = store.transaction;
  const { reached, release, pass } = gate();
  let first = true;
  store.transaction = (async (work) => {
    if (first) {
      first = false;
      await pass();
    }
    return transaction.call(store, work);
  }) as Store['transaction'];
  return { reached, release, restore: () => (store.transaction = transaction) };
}
