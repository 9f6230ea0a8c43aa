/**
 * The circuit breaker, kept in SharedState so every gateway node sees the same circuit.
 *
 *   closed ──(failure_threshold consecutive failures)──► open ──(cooldown_interval)──► half-open
 *   half-open: exactly one caller gets 'probe', the others still get 'open';
 *   probe success ──► closed;  probe failure ──► open for another cooldown.
 *
 * Keys, under `cb:<key>:`: `fail` (consecutive failures), `open` (present during the cooldown, expires
 * with it), `tripped` (present from opening until a success closes the circuit: tripped without open is
 * half-open) and `probe` (the single probe's lease, held for one cooldown so a probe that never reports
 * does not keep the circuit half-open forever).
 *
 * The breaker enforces no minimum cooldown: the config schema does.
 */
import type { SharedState } from './types.js';

export interface BreakerConfig {
  /** Consecutive failures after which the circuit opens (≥ 1). */
  failure_threshold: number;
  /** Milliseconds the circuit stays open before one probe is let through. */
  cooldown_interval: number;
}

export type BreakerState = 'closed' | 'open' | 'probe';

export interface Breaker {
  /** 'closed' or 'probe': send the request. 'open': do not. */
  canPass(key: string, cfg: BreakerConfig): Promise<BreakerState>;
  recordSuccess(key: string): Promise<void>;
  recordFailure(key: string, cfg: BreakerConfig): Promise<void>;
  /** A probe that ended without a verdict (the client left) gives its turn to the next caller. */
  releaseProbe(key: string): Promise<void>;
}

/** Failures older than this no longer count towards opening, so idle keys leave the state. */
const FAILURE_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A tripped circuit that nobody calls again is forgotten (closed) after its cooldown plus this. */
const TRIPPED_RETENTION_MS = 24 * 60 * 60 * 1000;

export function createBreaker(state: SharedState): Breaker {
  const keys = (key: string) => ({
    fail: `cb:${key}:fail`,
    open: `cb:${key}:open`,
    tripped: `cb:${key}:tripped`,
    probe: `cb:${key}:probe`,
  });

  async function open(key: string, cfg: BreakerConfig): Promise<void> {
    const k = keys(key);
    const cooldown = Math.max(1, cfg.cooldown_interval);
    // `open` first: `tripped` without `open` would read as half-open and let a probe through.
    await state.set(k.open, String(Date.now()), cooldown);
    await Promise.all([
      state.set(k.tripped, '1', cooldown + TRIPPED_RETENTION_MS),
      state.del(k.fail),
      state.del(k.probe),
    ]);
  }

  return {
    async canPass(key, cfg) {
      const k = keys(key);
      const [tripped, isOpen] = await Promise.all([state.get(k.tripped), state.get(k.open)]);
      if (tripped === undefined) return 'closed';
      if (isOpen !== undefined) return 'open';
      const won = await state.setIfAbsent(k.probe, String(Date.now()), Math.max(1, cfg.cooldown_interval));
      return won ? 'probe' : 'open';
    },

    async recordSuccess(key) {
      const k = keys(key);
      const [tripped, isOpen] = await Promise.all([
        state.get(k.tripped),
        state.get(k.open),
        state.del(k.fail),
      ]);
      // A success that lands during the cooldown came from a call sent before the circuit opened; the
      // cooldown still runs its course.
      if (tripped === undefined || isOpen !== undefined) return;
      await Promise.all([state.del(k.tripped), state.del(k.probe)]);
    },

    async recordFailure(key, cfg) {
      const k = keys(key);
      const [tripped, isOpen] = await Promise.all([state.get(k.tripped), state.get(k.open)]);
      if (tripped !== undefined) {
        // Open: a late failure of a call sent before opening changes nothing. Half-open: the probe
        // failed, so the circuit opens for another cooldown.
        if (isOpen === undefined) await open(key, cfg);
        return;
      }
      const failures = await state.incr(k.fail, FAILURE_RETENTION_MS);
      if (failures >= cfg.failure_threshold) await open(key, cfg);
    },

    async releaseProbe(key) {
      await state.del(keys(key).probe);
    },
  };
}
