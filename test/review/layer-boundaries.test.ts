/**
 * The layer boundaries of src/ are ESLint rules (eslint.config.js): these cases show they are live — an
 * import across a boundary is an error, the same import where it is allowed is not.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint();

async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layer boundaries', () => {
  it.each([
    ['src/providers/anthropic/x.ts', "import { route } from '../../gateway/router.js';"],
    ['src/providers/x.ts', "import type { Store } from '../store/types.js';"],
    ['src/core/x.ts', "import { ENDPOINTS } from '../gateway/endpoints.js';"],
    ['src/store/repositories/x.ts', "import { execute } from '../../gateway/execute.js';"],
    ['src/state/x.ts', "import { findAdapter } from '../providers/registry.js';"],
    ['src/gateway/steps/x.ts', "import { HttpSink } from '../../server/http-sink.js';"],
    ['src/ingress/x.ts', "import { buildApp } from '../server/app.js';"],
  ])('%s may not: %s', async (filePath, code) => {
    expect(await boundaryErrors(filePath, code)).toHaveLength(1);
  });

  it.each([
    ['src/providers/anthropic/x.ts', "import { GatewayError } from '../../core/errors.js';"],
    ['src/gateway/x.ts', "import type { Store } from '../store/types.js';"],
    ['src/server/x.ts', "import { execute } from '../gateway/execute.js';"],
    ['src/gateway-server.ts', "import { buildApp } from './server/app.js';"],
  ])('%s may: %s', async (filePath, code) => {
    expect(await boundaryErrors(filePath, code)).toEqual([]);
  });
});
