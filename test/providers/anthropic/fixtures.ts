import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function anthropicFixtureDir(): string {
  const sharedDir = process.env.SHARED_DIR ?? path.resolve(repoRoot, '..', 'shared');
  return path.join(sharedDir, 'reference', 'provider-fixtures', 'anthropic');
}

export function listStreamFixtures(): string[] {
  return readdirSync(anthropicFixtureDir())
    .filter((name) => name.endsWith('.chunks.txt'))
    .sort();
}

/** The events of a recorded stream: one JSON `data:` payload per line. */
export function readStreamFixture(name: string): string[] {
  return readFileSync(path.join(anthropicFixtureDir(), name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

export function readJsonFixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(anthropicFixtureDir(), name), 'utf8')) as Record<string, unknown>;
}
