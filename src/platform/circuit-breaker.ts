// A circuit breaker for a dependency that the service can do without (the shared rate-limit counters): after a
// failure or a timeout, calls skip it for a cool-down, then one call probes it while the others go on
// skipping; the probe's success closes the breaker, its failure starts another cool-down. A hung Redis added
// its command timeout (0.5 s) to every request until it recovered; now one request per cool-down pays it.
//
// Written here rather than taken from npm: none is in node_modules, and what is needed is this one state
// machine with no options, events or statistics. opossum and cockatiel wrap calls in their own promise
// plumbing and timers for features (volume thresholds, rolling windows, fallbacks) this does not use.

import type { OutageLog, OutageLogger } from './outage-log.ts';

export type BreakerState = 'closed' | 'open' | 'probing';

export class CircuitBreaker {
  readonly coolDownMs: number;
  #state: BreakerState = 'closed';
  /** open: when the cool-down ends; probing: when the probe started. */
  #at = 0;
  readonly #onChange: (open: boolean) => void;

  /** `onChange(open)` is told when the breaker opens (true) and when it closes again (false). */
  constructor(coolDownMs: number, onChange: (open: boolean) => void = () => undefined) {
    this.coolDownMs = coolDownMs;
    this.#onChange = onChange;
  }

  get state(): BreakerState {
    return this.#state;
  }

  /** Whether this call may use the dependency: always while closed, else only as the one probe. */
  allow(): boolean {
    if (this.#state === 'closed') return true;
    const now = Date.now();
    // A probe that never settles (it should not: every call has a timeout) must not keep the breaker open
    // for good: after another cool-down a second probe goes.
    if (now < this.#at + this.coolDownMs) return false;
    this.#state = 'probing';
    this.#at = now;
    return true;
  }

  succeeded(): void {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#onChange(false);
  }

  failed(): void {
    const wasClosed = this.#state === 'closed';
    this.#state = 'open';
    this.#at = Date.now();
    if (wasClosed) this.#onChange(true);
  }
}

/** A shared dependency (Redis) behind its breaker: its failures counted, its outages logged. */
export interface GuardedDependency {
  breaker: CircuitBreaker;
  outage: OutageLog;
  failures: { inc(): void };
}

/**
 * Asks the dependency for a request while the breaker lets it: `{ answer }`, or undefined when it failed (the
 * breaker, the count and the outage log are told; `log` is the request's) or was skipped, the breaker being
 * open: the caller then answers without it.
 */
export async function askGuarded<T>(
  { breaker, outage, failures }: GuardedDependency,
  log: OutageLogger,
  ask: () => Promise<T>,
): Promise<{ answer: T } | undefined> {
  if (!breaker.allow()) {
    // Counted in the outage that opened the breaker (its first line gave the cause).
    outage.failed({ reason: 'skipped: circuit breaker open' });
    return undefined;
  }
  try {
    const answer = await ask();
    breaker.succeeded();
    outage.succeeded();
    return { answer };
  } catch (error) {
    failures.inc();
    breaker.failed();
    const reason = error instanceof Error ? error.message : String(error);
    outage.failed({ reason, coolDownMs: breaker.coolDownMs }, log);
    return undefined;
  }
}
