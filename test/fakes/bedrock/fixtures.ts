import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export function bedrockFixtureDir(): string {
  const sharedDir = process.env.SHARED_DIR ?? path.resolve(repoRoot, '..', 'shared');
  return path.join(sharedDir, 'reference', 'provider-fixtures', 'amazon-bedrock');
}

export function listBedrockStreamFixtures(): string[] {
  return readdirSync(bedrockFixtureDir())
    .filter((name) => name.endsWith('.chunks.txt'))
    .sort();
}

export function readBedrockStreamFixture(name: string): string[] {
  return readFileSync(path.join(bedrockFixtureDir(), name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

export function readBedrockJsonFixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(bedrockFixtureDir(), name), 'utf8')) as Record<string, unknown>;
}
