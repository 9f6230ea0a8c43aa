/**
 * Rate-limit policies at work: which of the workspace's policies meet a target call, one atomic charge of
 * every counter they name (state/rate-counter.ts: process memory, or Redis shared by every node), the
 * 429 when one has no room, and the settlement of token reservations to what the answer used.
 *
 * A call charges each requests (policy, group) once, however many targets it tries: a fallback's next
 * target charges only the requests policies the earlier ones did not meet (a `provider` or `model` policy
 * of its own). A tokens policy reserves for every target the call tries, each reservation settled to what
 * that target used: a target that failed before answering gave its reservation back, so the fallback that
 * answers must reserve again, or its tokens would never be counted.
 *
 * When the counters cannot answer (Redis unreachable, or slower than the timeout) the fail mode decides:
 * `open` lets the call through unchecked, `closed` answers 503; what a late answer says was charged after
 * all for a call so decided goes back, and so does what a check whose answer was lost charged, found by its
 * mark in the counters (giveBackLate). Either way it is counted in `stats` and logged (at
 * most one line per LOG_EVERY_MS while it lasts).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { GatewayError } from '../../core/errors.js';
import type { RateCounter, RateTake, RateTakeResult } from '../../state/rate-counter.js';
import { answerLost } from '../../state/types.js';
import type { RateLimitPolicy } from '../../store/types.js';
import type {
  RateLimitAdmission as Admission,
  RateLimitFailMode,
  RateLimits,
  RateLimitStats,
  RouteRun,
  TargetCall,
} from '../pipeline-types.js';
import { callFacts } from './call-facts.js';
import {
  compilePolicies,
  groupOf,
  policyMatches,
  type CompiledPolicy,
  type PolicyGroup,
} from './policy-match.js';
import { RateLimitExceededError } from './rate-limit-error.js';
import { rateLimitHeaders, retryAfterSeconds, type GoverningReading } from './rate-limit-headers.js';
import { tokenReservation, type TokenReservation } from './token-estimate.js';

export interface RateLimiterOptions {
  counter: RateCounter;
  failMode: RateLimitFailMode;
  timeoutMs: number;
  logger: Logger;
  /** The clock of the counters, when not their own (tests inject time). */
  clock?: (() => number) | undefined;
}

interface Charge {
  policy: CompiledPolicy;
  group: PolicyGroup;
  take: RateTake;
}

/** Per call: the requests counters it already charged, and what each counter last read (for the headers). */
interface CallRecord {
  charged: Set<string>;
  readings: Map<string, GoverningReading>;
}

const LOG_EVERY_MS = 10_000;

export class RateLimiter implements RateLimits {
  readonly stats: RateLimitStats = {
    checked: 0,
    refused: 0,
    unavailable: 0,
    admittedUnchecked: 0,
    refusedUnavailable: 0,
    settleFailures: 0,
  };
  private readonly calls = new WeakMap<RouteRun, CallRecord>();
  /** Names this node's charges apart from every other node's: `<node>:<n>`. */
  private readonly node = randomUUID();
  private charges = 0;
  private lastLogged = -Infinity;
  private unloggedFailures = 0;

  constructor(private readonly options: RateLimiterOptions) {}

  get failMode(): RateLimitFailMode {
    return this.options.failMode;
  }

  admit(call: TargetCall): Promise<Admission | undefined> | undefined {
    const { lookups } = call.run.deps;
    const workspaceId = call.run.call.ctx.apiKey.workspace_id;
    const cached = lookups.cachedRateLimitPolicies(workspaceId);
    if (cached !== undefined) return cached.length === 0 ? undefined : this.charge(call, cached);
    return lookups
      .rateLimitPolicies(workspaceId)
      .then((policies) => (policies.length === 0 ? undefined : this.charge(call, policies)));
  }

  /** Charges the counters of the policies (the workspace's, at least one) that meet the call. */
  private async charge(
    call: TargetCall,
    policies: readonly RateLimitPolicy[],
  ): Promise<Admission | undefined> {
    const { run } = call;
    const record = this.recordOf(run);
    const facts = callFacts(call);
    let charges: Charge[] | undefined;
    let reservation: TokenReservation | undefined;
    for (const policy of compilePolicies(policies)) {
      if (!policyMatches(policy, facts)) continue;
      const group = groupOf(policy, facts);
      if (!group) continue;
      const tokens = policy.policy.type === 'tokens';
      if (!tokens && record.charged.has(group.counterKey)) continue;
      if (tokens) reservation ??= tokenReservation(call);
      (charges ??= []).push({
        policy,
        group,
        take: {
          key: group.counterKey,
          periodMs: policy.periodMs,
          limit: policy.policy.value,
          need: 1,
          cost: tokens ? (reservation as TokenReservation).tokens : 1,
        },
      });
    }
    if (!charges) return undefined;
    this.stats.checked++;

    const takes = charges.map((charge) => charge.take);
    // Named when a lost answer would leave something to give back (closed: all of it; open: tokens), so
    // that Redis marks the charge and the give-back can tell whether it ran.
    const named =
      this.options.counter.giveBackUnanswered !== undefined &&
      (this.options.failMode === 'closed' || reservation !== undefined);
    const chargeName = named ? `${this.node}:${++this.charges}` : undefined;
    let answer: RateTakeResult | Promise<RateTakeResult> | undefined;
    let result: RateTakeResult;
    try {
      answer = this.options.counter.take(takes, this.options.clock?.(), chargeName);
      // A counter that answers at once (memory, a lease in hand) needs no timeout.
      result = answer instanceof Promise ? await this.withTimeout(answer) : answer;
    } catch (error) {
      if (answer instanceof Promise) this.giveBackLate(answer, charges, chargeName);
      this.unavailable(error, run);
      return undefined;
    }

    charges.forEach((charge, i) => {
      record.readings.set(charge.take.key, {
        type: charge.policy.policy.type,
        limit: charge.take.limit,
        reading: result.readings[i],
      });
    });
    const headers = rateLimitHeaders([...record.readings.values()]);
    run.call.state.rateLimitHeaders = headers;
    if (!result.admitted) {
      this.stats.refused++;
      // The refusal that lasts longest is the one to wait for.
      let refused = result.refused[0];
      for (const i of result.refused) {
        if (result.readings[i].retryAfterMs > result.readings[refused].retryAfterMs) refused = i;
      }
      const retryAfterMs = result.readings[refused].retryAfterMs;
      throw new RateLimitExceededError(
        charges[refused].policy.policy,
        charges[refused].group.label,
        retryAfterMs,
        {
          ...headers,
          'retry-after': retryAfterSeconds(retryAfterMs),
        },
      );
    }
    for (const charge of charges) {
      if (charge.policy.policy.type === 'requests') record.charged.add(charge.group.counterKey);
    }
    if (reservation === undefined) return undefined;
    return {
      reservations: charges
        .filter((charge) => charge.policy.policy.type === 'tokens')
        .map((charge) => ({
          key: charge.take.key,
          periodMs: charge.take.periodMs,
          limit: charge.take.limit,
          reserved: charge.take.cost,
        })),
      inputLength: reservation.inputLength,
    };
  }

  async settle(admission: Admission, used: number | undefined): Promise<void> {
    if (used === undefined) return;
    const adjusts = admission.reservations
      .filter((r) => r.reserved !== used)
      .map((r) => ({ key: r.key, periodMs: r.periodMs, limit: r.limit, units: used - r.reserved }));
    if (adjusts.length === 0) return;
    try {
      await this.withTimeout(this.options.counter.adjust(adjusts, this.options.clock?.()));
    } catch (error) {
      this.stats.settleFailures++;
      this.options.logger.warn({ err: error }, 'rate limits: a token reservation could not be settled');
    }
  }

  close(): Promise<void> {
    return this.options.counter.close();
  }

  /**
   * A take that timed out may still be run by Redis (it was slow, not down). When its answer comes, and
   * admitted, what it charged for a call decided without it goes back: under `closed` all of it, the call
   * refused with 503 taking no room from the caller's next ones; under `open` its token reservations, which
   * no settlement will ever bring to what the unchecked call used (they would stand until drained, a
   * `max_tokens` call's as much as a whole day's limit). Its requests stand: the call was made.
   */
  private giveBackLate(
    answer: Promise<RateTakeResult>,
    charges: readonly Charge[],
    chargeName: string | undefined,
  ): void {
    const closed = this.options.failMode === 'closed';
    const given = charges.filter((charge) => closed || charge.policy.policy.type === 'tokens');
    if (given.length === 0) return;
    const adjusts = given.map(({ take }) => ({
      key: take.key,
      periodMs: take.periodMs,
      limit: take.limit,
      units: -take.cost,
    }));
    const couldNotGiveBack = (error: unknown) => {
      // The charge stands until the counter drains it.
      this.options.logger.warn({ err: error }, 'rate limits: a late charge could not be given back');
    };
    const giveBack = (late: RateTakeResult) => {
      if (!late.admitted) return;
      this.options.counter.adjust(adjusts, this.options.clock?.()).catch(couldNotGiveBack);
    };
    // No answer at all (already counted as unavailable): the connection went after the take was sent, or
    // it timed out, and Redis may have charged it all the same. The charge's mark tells, when the node is
    // connected again: given back if it ran and its mark is still on one of its counters, nothing if it
    // did not run, and nothing either once every one of its counters was written since (the charge then
    // stands until drained: docs/rate-limits.md, "The give-back is not exact"). A take never sent did not
    // run. An error
    // Redis answered (a ReplyError) is no lost answer: the script may have stopped partway, its first
    // counters charged and marked and the others not, and giving back every counter's units would return
    // some it never took; what it charged stands until drained.
    const giveBackUnanswered = (error: unknown) => {
      const { counter } = this.options;
      if (chargeName === undefined || !answerLost(error)) return;
      counter.giveBackUnanswered?.(chargeName, adjusts, this.options.clock?.()).catch(couldNotGiveBack);
    };
    answer.then(giveBack, giveBackUnanswered);
  }

  private recordOf(run: RouteRun): CallRecord {
    let record = this.calls.get(run);
    if (!record) {
      record = { charged: new Set(), readings: new Map() };
      this.calls.set(run, record);
    }
    return record;
  }

  private unavailable(error: unknown, run: RouteRun): void {
    this.stats.unavailable++;
    const closed = this.options.failMode === 'closed';
    if (closed) this.stats.refusedUnavailable++;
    else this.stats.admittedUnchecked++;
    this.unloggedFailures++;
    const now = performance.now();
    if (now - this.lastLogged >= LOG_EVERY_MS) {
      this.options.logger.error(
        {
          err: error,
          failMode: this.options.failMode,
          calls: this.unloggedFailures,
          traceId: run.call.ctx.traceId,
        },
        closed
          ? 'rate limits: counters unreachable, calls refused with 503 (GATEWAY_RATE_LIMIT_FAIL_MODE=closed)'
          : 'rate limits: counters unreachable, calls let through unchecked (GATEWAY_RATE_LIMIT_FAIL_MODE=open)',
      );
      this.lastLogged = now;
      this.unloggedFailures = 0;
    }
    if (closed) {
      throw new GatewayError(
        'rate_limit_unavailable',
        'Rate limits cannot be checked right now (their shared state is unreachable); try again shortly',
        { cause: error, headers: { 'retry-after': '1' } },
      );
    }
  }

  private withTimeout<T>(work: Promise<T>): Promise<T> {
    const ms = this.options.timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`rate counters did not answer within ${ms} ms`)), ms);
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }
}
