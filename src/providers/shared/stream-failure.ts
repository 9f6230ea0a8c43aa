/**
 * The failures a provider reports inside a stream it answered 200, as a pass-through reads them
 * (`ProviderAdapter.passthroughStreamFailure`): each adapter knows which of its own events are errors and
 * reads them as its translated calls' streams do; this is the part they share.
 */
import type { StreamFailureReader } from '../types.js';

/** The failure the first reader recognises in the event. */
export function firstFailure(...readers: StreamFailureReader[]): StreamFailureReader {
  return (event, json) => {
    for (const read of readers) {
      const failure = read(event, json);
      if (failure) return failure;
    }
    return undefined;
  };
}
