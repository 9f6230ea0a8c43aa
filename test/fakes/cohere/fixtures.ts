// The recorded Cohere samples in provider-fixtures/cohere/: whole JSON bodies and streams (one event per line).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function providerFixturesDir(provider: string): string {
  const sharedDir = process.env.SHARED_DIR ?? path.resolve(repoRoot, '..', 'shared');
  return path.join(sharedDir, 'reference', 'provider-fixtures', provider);
}

export const cohereFixturesDir = (): string => providerFixturesDir('cohere');

export function readCohereJson(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(cohereFixturesDir(), `${name}.json`), 'utf8')) as Record<
    string,
    unknown
  >;
}

/** The events of a recorded stream, parsed. */
export function readCohereChunks(name: string): Record<string, unknown>[] {
  return readFileSync(path.join(cohereFixturesDir(), `${name}.chunks.txt`), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Names (without `.chunks.txt`) of every recorded stream. */
export function listCohereStreams(): string[] {
  return readdirSync(cohereFixturesDir())
    .filter((file) => file.endsWith('.chunks.txt'))
    .map((file) => file.slice(0, -'.chunks.txt'.length))
    .sort();
}
