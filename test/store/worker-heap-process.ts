/**
 * Run by worker-heap.test.ts under `--max-semi-space-size=64 --min-semi-space-size=64`, as `npm start`
 * runs the gateway. Prints one JSON line: the young generation (new space, in MB) of a worker made with
 * `new Worker`, of one made with `startWorker`, both asking for 4 MB, and of the main thread after both.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { startWorker } from '../../src/store/worker-heap.js';

// Allocates enough short-lived garbage to make the young generation grow as far as it may, then reports
// its size.
const CHURN = `
const { parentPort } = require('node:worker_threads');
const { getHeapSpaceStatistics } = require('node:v8');
let keep = [];
for (let i = 0; i < 300000; i++) { keep.push({ i, text: 'row ' + i }); if (keep.length > 1000) keep = []; }
const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
parentPort.postMessage(space.space_size / 1048576);
`;
const OPTIONS: WorkerOptions = { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 4 } };

function newSpaceOf(worker: Worker): Promise<number> {
  return new Promise((resolve, reject) => {
    worker.once('message', (mb: number) => {
      void worker.terminate();
      resolve(mb);
    });
    worker.once('error', reject);
  });
}

const plain = await newSpaceOf(new Worker(CHURN, OPTIONS));
const started = await newSpaceOf(startWorker(CHURN, OPTIONS));
const main = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_size / 1048576;
console.log(JSON.stringify({ plain, started, main }));
