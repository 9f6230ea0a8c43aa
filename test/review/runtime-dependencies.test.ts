/**
 * Every runtime dependency ships with the gateway, so each must be imported by the code that ships
 * (src/): one that is not is dead weight in every install, and an attack surface for nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Package names in import / export-from / import() / require() specifiers, subpaths dropped. */
function importedPackages(source: string): string[] {
  const specifiers = source.matchAll(
    /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"./][^'"]*)['"]/g,
  );
  return [...specifiers].map(([, spec]) => {
    const parts = spec.split('/');
    return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  });
}

describe('package.json dependencies', () => {
  it('are each imported somewhere in src/', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const imported = new Set(
      sourceFiles(join(root, 'src')).flatMap((file) => importedPackages(readFileSync(file, 'utf8'))),
    );
    expect(Object.keys(pkg.dependencies).filter((name) => !imported.has(name))).toEqual([]);
  });
});
