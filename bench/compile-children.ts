// The bench's own servers run as plain JavaScript, like the gateway's production build: under tsx's
// loader they would carry the loader's memory into their peak RSS. TypeScript's transpileModule is
// enough for these few self-contained files. Output goes under node_modules/.cache so that package
// imports (undici) resolve from there.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const CHILD_SOURCES = [
  'fake-upstream.ts',
  'fake-service-clock.ts',
  'bare-proxy.ts',
  'forward-proxy.ts',
  'exit-with-parent.ts',
];

/** Transpiles the child scripts and returns the folder holding the `.js` files. */
export function compileChildren(benchDir: string, repoRoot: string): string {
  const outDir = path.join(repoRoot, 'node_modules', '.cache', 'gateway-bench');
  mkdirSync(outDir, { recursive: true });
  for (const file of CHILD_SOURCES) {
    const source = readFileSync(path.join(benchDir, file), 'utf8');
    const { outputText, diagnostics } = ts.transpileModule(source, {
      fileName: file,
      reportDiagnostics: true,
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2023,
        verbatimModuleSyntax: true,
      },
    });
    if (diagnostics?.length) {
      throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(diagnostics[0].messageText, '\n')}`);
    }
    writeFileSync(path.join(outDir, file.replace(/\.ts$/, '.js')), outputText);
  }
  // Mark the folder as ESM whatever the nearest package.json says.
  writeFileSync(path.join(outDir, 'package.json'), '{"type":"module"}\n');
  return outDir;
}
