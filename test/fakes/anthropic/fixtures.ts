import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function dir(): string {
  const sharedDir = process.env.SHARED_DIR ?? path.resolve(repoRoot, '..', 'shared');
  return path.join(sharedDir, 'reference', 'provider-fixtures', 'anthropic');
}

export function readAnthropicStreamFixture(name: string): string[] {
  return readFileSync(path.join(dir(), name), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
}

export function readAnthropicJsonFixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(dir(), name), 'utf8')) as Record<string, unknown>;
}
