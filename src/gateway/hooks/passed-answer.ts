/**
 * The steps inside a target's hooks that keep its answer (the caches) register here (OutputChecks), and
 * are told once the output checks have passed it, with the answer as the client got it. An answer the
 * checks denied, or a call that failed, is kept by nobody; those that asked to know are told it was
 * dropped once the hooks have ended (ended).
 */
import type { CheckedRewrite, OutputChecks } from '../pipeline-types.js';

type Keeper = (rewrite: CheckedRewrite | undefined) => Promise<void> | void;

export class PassedAnswer implements OutputChecks {
  private readonly keepers: Keeper[] = [];
  private readonly droppers: Array<() => void> = [];
  private settled = false;

  whenPassed(keep: Keeper, dropped?: () => void): void {
    this.keepers.push(keep);
    if (dropped) this.droppers.push(dropped);
  }

  /** The answer passed, rewritten as `rewrite` says (undefined: as it came): the keepers keep it. */
  passed(rewrite: CheckedRewrite | undefined): Promise<unknown> | undefined {
    this.settled = true;
    if (this.keepers.length === 0) return undefined;
    return Promise.all(this.keepers.map((keep) => keep(rewrite)));
  }

  /** The hooks have ended, however they did: an answer that did not pass was dropped. */
  ended(): void {
    if (this.settled) return;
    this.settled = true;
    for (const dropped of this.droppers) dropped();
  }
}
