// The bench's command line, shared by both modes (bench/run.ts dispatches on --mode).
import path from 'node:path';

export interface Args {
  mode: 'latency' | 'saturation';
  quick: boolean;
  config?: string;
  build: boolean;
  gateway: boolean;
  gatewayEntry: string;
  /** Run the gateway with this REDIS_URL (shared state, rate-limit counters), under a prefix of its own. */
  redis?: string;
  /** Rate-limit policies (the POST /v1/policies/rate-limits body, or an array of them) created before measuring. */
  rateLimitPolicies?: Record<string, unknown>[];
  /** A directory where the gateway writes a V8 CPU profile when it stops (`node --cpu-prof`). */
  cpuProfileDir?: string;
  /** Saturation mode: fresh pairs of bare proxy and gateway whose saturation rounds are pooled. */
  generations: number;
}

const KNOWN =
  "--mode latency|saturation, --quick, --config '<json>', --redis <url>, --rate-limit-policy '<json>', " +
  '--build, --no-gateway, --gateway-entry <file>, --cpu-prof <dir>, --generations <n>';

export function parseArgs(argv: string[], repoRoot: string): Args {
  const args: Args = {
    mode: 'latency',
    quick: false,
    build: false,
    gateway: true,
    gatewayEntry: path.join(repoRoot, 'dist', 'main.js'),
    generations: 1,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') args.quick = true;
    else if (a === '--build') args.build = true;
    else if (a === '--no-gateway') args.gateway = false;
    else if (a === '--config') args.config = argv[++i];
    else if (a === '--gateway-entry') args.gatewayEntry = path.resolve(argv[++i] ?? '');
    else if (a.startsWith('--config=')) args.config = a.slice('--config='.length);
    else if (a === '--redis') args.redis = argv[++i];
    else if (a === '--cpu-prof') args.cpuProfileDir = path.resolve(argv[++i] ?? '');
    else if (a === '--generations') {
      args.generations = Number(argv[++i]);
      if (!Number.isInteger(args.generations) || args.generations < 1)
        throw new Error(`--generations takes a whole number ≥ 1 (${KNOWN})`);
    } else if (a === '--rate-limit-policy') args.rateLimitPolicies = [JSON.parse(argv[++i] ?? '')].flat();
    else if (a === '--mode' || a.startsWith('--mode=')) {
      const mode = a === '--mode' ? argv[++i] : a.slice('--mode='.length);
      if (mode !== 'latency' && mode !== 'saturation') throw new Error(`unknown mode ${mode} (${KNOWN})`);
      args.mode = mode;
    } else throw new Error(`unknown argument ${a} (known: ${KNOWN})`);
  }
  if (args.config !== undefined) JSON.parse(args.config); // fail early on a typo, before any process starts
  return args;
}
