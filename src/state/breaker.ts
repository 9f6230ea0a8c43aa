/**
 * The circuit breaker, kept in SharedState so every gateway node sees the same circuit.
 *
 *   closed ──(failure_threshold consecutive failures)──► open ──(cooldown_interval)──► half-open
 *   half-open: exactly one caller gets 'probe', the others still get 'open';
 *   probe success ──► closed;  probe failure ──► open for another cooldown.
 *
 * Keys, under `cb:<key>:`: `fail` (consecutive failures), `open` (present during the cooldown, expires
 * with it), `tripped` (present from opening until a success closes the circuit: tripped without open is
 * half-open), `probe` (the single probe's lease, held for one cooldown so a probe that never reports
 * does not keep the circuit half-open forever) and `gen` (the circuit's generation, new each time it
 * opens).
 *
 * Only calls let through by the circuit as it is now decide it: every pass carries the generation it was
 * given in, and an outcome of an older generation (a long call sent before the circuit opened, ending
 * while it is half-open or closed again) changes nothing. While the circuit is tripped, only its probe's
 * outcome closes or reopens it.
 *
 * The breaker enforces no minimum cooldown: the config schema does.
 */
import { randomUUID } from 'node:crypto';
import type { SharedState } from './types.js';

export interface BreakerConfig {
  /** Consecutive failures after which the circuit opens (≥ 1). */
  failure_threshold: number;
  /** Milliseconds the circuit stays open before one probe is let through. */
  cooldown_interval: number;
}

export type BreakerState = 'closed' | 'open' | 'probe';

/** What the circuit let a call do, and the ticket its outcome is reported with. */
export interface BreakerPass {
  /** 'closed' or 'probe': send the request. 'open': do not. */
  state: BreakerState;
  /** The circuit's generation when the call was let through (a probe's own lease for 'probe'). */
  ticket: string;
}

export interface Breaker {
  canPass(key: string, cfg: BreakerConfig): Promise<BreakerPass>;
  recordSuccess(key: string, pass: BreakerPass): Promise<void>;
  recordFailure(key: string, cfg: BreakerConfig, pass: BreakerPass): Promise<void>;
  /** A probe that ended without a verdict (the client left) gives its turn to the next caller. */
  releaseProbe(key: string, pass: BreakerPass): Promise<void>;
}

/** Failures older than this no longer count towards opening, so idle keys leave the state. */
const FAILURE_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A tripped circuit that nobody calls again is forgotten (closed) after its cooldown plus this. */
const TRIPPED_RETENTION_MS = 24 * 60 * 60 * 1000;
/** The generation of a circuit that never opened (or was forgotten). */
const FIRST_GENERATION = '0';

/** A probe's ticket is its generation, then its own lease id. */
const generationOfProbe = (ticket: string) => ticket.slice(0, ticket.indexOf('/'));

export function createBreaker(state: SharedState): Breaker {
  const keys = (key: string) => ({
    fail: `cb:${key}:fail`,
    open: `cb:${key}:open`,
    tripped: `cb:${key}:tripped`,
    probe: `cb:${key}:probe`,
    gen: `cb:${key}:gen`,
  });

  async function read(key: string) {
    const k = keys(key);
    const [tripped, isOpen, gen] = await Promise.all([
      state.get(k.tripped),
      state.get(k.open),
      state.get(k.gen),
    ]);
    return { tripped: tripped !== undefined, open: isOpen !== undefined, gen: gen ?? FIRST_GENERATION };
  }

  /** Whether the outcome of `pass` is of the circuit as it is now. */
  function current(pass: BreakerPass, gen: string): boolean {
    return (pass.state === 'probe' ? generationOfProbe(pass.ticket) : pass.ticket) === gen;
  }

  async function open(key: string, cfg: BreakerConfig): Promise<void> {
    const k = keys(key);
    const cooldown = Math.max(1, cfg.cooldown_interval);
    // `open` (and the new generation) first: `tripped` without `open` would read as half-open and let a
    // probe through.
    await Promise.all([
      state.set(k.open, String(Date.now()), cooldown),
      state.set(k.gen, randomUUID(), cooldown + TRIPPED_RETENTION_MS),
    ]);
    await Promise.all([
      state.set(k.tripped, '1', cooldown + TRIPPED_RETENTION_MS),
      state.del(k.fail),
      state.del(k.probe),
    ]);
  }

  return {
    async canPass(key, cfg) {
      const { tripped, open: isOpen, gen } = await read(key);
      if (!tripped) return { state: 'closed', ticket: gen };
      if (isOpen) return { state: 'open', ticket: gen };
      const ticket = `${gen}/${randomUUID()}`;
      const won = await state.setIfAbsent(keys(key).probe, ticket, Math.max(1, cfg.cooldown_interval));
      return won ? { state: 'probe', ticket } : { state: 'open', ticket: gen };
    },

    async recordSuccess(key, pass) {
      const k = keys(key);
      const { tripped, open: isOpen, gen } = await read(key);
      // A call let through before the circuit last opened tells nothing of the target now.
      if (!current(pass, gen)) return;
      if (!tripped) {
        await state.del(k.fail);
        return;
      }
      // Tripped: only the probe of this generation closes it, and never during a cooldown.
      if (pass.state !== 'probe' || isOpen) return;
      await Promise.all([state.del(k.tripped), state.del(k.probe), state.del(k.fail)]);
    },

    async recordFailure(key, cfg, pass) {
      const k = keys(key);
      const { tripped, open: isOpen, gen } = await read(key);
      if (!current(pass, gen)) return;
      if (tripped) {
        // Half-open and this was the probe: the circuit opens for another cooldown.
        if (pass.state === 'probe' && !isOpen) await open(key, cfg);
        return;
      }
      const failures = await state.incr(k.fail, FAILURE_RETENTION_MS);
      if (failures >= cfg.failure_threshold) await open(key, cfg);
    },

    async releaseProbe(key, pass) {
      if (pass.state === 'probe') await state.deleteIfEquals(keys(key).probe, pass.ticket);
    },
  };
}
