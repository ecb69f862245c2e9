// SIGTERM and SIGINT for the commands that serve, from their first step on. Handlers set only once the
// server was built left the start-up (opening the store, the demo's seeding, up to 2 s of waiting for Redis)
// to Node's default action, which killed the process with exit 143 or 130 instead of the 0 of a normal stop.
// An import stops cleanly at the first signal, then dies of it (dieOf).
import { constants } from 'node:os';

export class StopSignals {
  /** The first signal, once one came. */
  received: NodeJS.Signals | undefined;
  /** Settles at the first signal, so that a start-up wait can end at once. */
  readonly first: Promise<NodeJS.Signals>;
  #handler: ((signal: NodeJS.Signals) => void) | undefined;
  #settle: (signal: NodeJS.Signals) => void = () => undefined;
  readonly #exit: (code: number) => void;

  /**
   * Catches the process's SIGTERM and SIGINT, or with `listen: false` only what `deliver` hands it (a server
   * run in a test's process, stopped as a signal stops it). `exit` ends the process (default process.exit).
   */
  constructor(options: { listen?: boolean; exit?: (code: number) => void } = {}) {
    this.#exit = options.exit ?? ((code) => process.exit(code));
    this.first = new Promise((resolve) => {
      this.#settle = resolve;
    });
    if (options.listen === false) return;
    const on = (signal: NodeJS.Signals) => this.deliver(signal);
    process.on('SIGTERM', on);
    process.on('SIGINT', on);
  }

  /** A signal: to the handler once there is one; before that, remembered (and a second one exits). */
  deliver(signal: NodeJS.Signals): void {
    if (this.#handler) {
      this.#handler(signal);
    } else if (this.received) {
      // Start-up stops at its next step (runServer); a second signal does not wait for it.
      this.#exit(1);
    } else {
      this.received = signal;
      this.#settle(signal);
    }
  }

  /** Hands every signal from now on to `handler`, and at once the one that came before, if any. */
  handle(handler: (signal: NodeJS.Signals) => void): void {
    this.#handler = handler;
    if (this.received) handler(this.received);
  }
}

/**
 * Ends the process by `signal`, with its default action: a shell sees a command that the signal ended (exit
 * status 130 for SIGINT, 143 for SIGTERM), and a shell script running it stops too rather than going on with
 * its next line, as it does after an exit(130). An exit would also wait for a read of a pipe that has nothing
 * to give, which the kernel's kill does not.
 */
export function dieOf(signal: NodeJS.Signals): never {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
  // The signal is delivered at once; should it not be, the exit status says the same.
  process.exit(128 + (constants.signals[signal] ?? 0));
}
