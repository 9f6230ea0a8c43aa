/**
 * The steps inside a target's hooks that keep its answer (the caches) register here (OutputChecks), and
 * are told once the output checks have passed it, with the answer as the client got it. An answer the
 * checks denied, or a call that failed, tells nobody: nothing of it is kept.
 */
import type { CheckedRewrite, OutputChecks } from '../pipeline-types.js';

type Keeper = (rewrite: CheckedRewrite | undefined) => Promise<void> | void;

export class PassedAnswer implements OutputChecks {
  private readonly keepers: Keeper[] = [];

  whenPassed(keep: Keeper): void {
    this.keepers.push(keep);
  }

  /** The answer passed, rewritten as `rewrite` says (undefined: as it came): the keepers keep it. */
  passed(rewrite: CheckedRewrite | undefined): Promise<unknown> | undefined {
    if (this.keepers.length === 0) return undefined;
    return Promise.all(this.keepers.map((keep) => keep(rewrite)));
  }
}
