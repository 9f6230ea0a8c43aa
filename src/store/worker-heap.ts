/**
 * Worker threads whose young generation is the size their own `resourceLimits` say.
 *
 * `npm start` sizes the main thread's young generation with V8 flags (`--max-semi-space-size`,
 * `--min-semi-space-size`). V8 reads those flags whenever it creates an isolate, a worker thread's
 * included, and they win over the worker's `resourceLimits`: the log thread, whose heap holds a batch of
 * rows at a time, got the main thread's 64 MB semi-spaces, and about 130 MB of resident memory once a
 * saturated gateway had filled both. The flags are unset before a worker is created. The main thread's
 * heap was sized when its isolate was created and keeps the flags' sizes.
 */
import { setFlagsFromString } from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** 0 is each flag's default: no size from the flags, so V8 takes the isolate's own limits. */
const UNSET_SEMI_SPACE_FLAGS = ['--max-semi-space-size=0', '--min-semi-space-size=0'];

export function startWorker(source: string | URL, options: WorkerOptions): Worker {
  for (const flag of UNSET_SEMI_SPACE_FLAGS) setFlagsFromString(flag);
  return new Worker(source, options);
}
