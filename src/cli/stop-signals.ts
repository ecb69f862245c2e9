// SIGTERM and SIGINT for the commands that serve, from their first step on. Handlers set only once the
// server was built left the start-up (opening the store, the demo's seeding, up to 2 s of waiting for Redis)
// to Node's default action, which killed the process with exit 143 or 130 instead of the 0 of a normal stop.

export class StopSignals {
  /** The first signal, once one came. */
  received: NodeJS.Signals | undefined;
  /** Settles at the first signal, so that a start-up wait can end at once. */
  readonly first: Promise<NodeJS.Signals>;
  #handler: ((signal: NodeJS.Signals) => void) | undefined;

  constructor() {
    let settle: (signal: NodeJS.Signals) => void = () => undefined;
    this.first = new Promise((resolve) => {
      settle = resolve;
    });
    const on = (signal: NodeJS.Signals) => {
      if (this.#handler) return this.#handler(signal);
      // Start-up stops at its next step (runServer); a second signal does not wait for it.
      if (this.received) process.exit(1);
      this.received = signal;
      settle(signal);
    };
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  }

  /** Hands every signal from now on to `handler`, and at once the one that came before, if any. */
  handle(handler: (signal: NodeJS.Signals) => void): void {
    this.#handler = handler;
    if (this.received) handler(this.received);
  }
}
