// Where the API's store reads ran (docs/operations.md, "Replicas"): reads by target, fallbacks to the
// primary by reason, and each replica's replay lag and health, read from the store's counts at each scrape.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { FallbackReason, Store } from '../../store/index.ts';

export function storeReadMetrics(registry: Registry, store: Store): void {
  const { reads } = store;
  new Counter({
    name: 'chessport_store_reads_total',
    help: 'Store reads of API requests by where they ran (primary or replica); token look-ups run on the primary.',
    labelNames: ['target'],
    registers: [registry],
    collect() {
      this.reset();
      this.inc({ target: 'primary' }, reads.counts.primary);
      this.inc({ target: 'replica' }, reads.counts.replica);
    },
  });
  new Counter({
    name: 'chessport_store_read_fallbacks_total',
    help:
      'Reads meant for a replica that ran on the primary, by reason: unavailable (no replica healthy), ' +
      'behind (the replica had not replayed the position the read needs), error (the read failed on it).',
    labelNames: ['reason'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of Object.entries(reads.counts.fallbacks)) {
        this.inc({ reason: reason as FallbackReason }, count);
      }
    },
  });
  new Gauge({
    name: 'chessport_replica_lag_seconds',
    help: 'Each replica’s replay lag behind the primary at its last health check (absent while it does not answer).',
    labelNames: ['replica'],
    registers: [registry],
    collect() {
      this.reset();
      for (const state of reads.states()) {
        if (state.lagSeconds !== null) this.set({ replica: state.name }, state.lagSeconds);
      }
    },
  });
  new Gauge({
    name: 'chessport_replica_healthy',
    help: '1 while reads go to the replica, 0 while it is skipped (not answering, promoted, or lagging too far).',
    labelNames: ['replica'],
    registers: [registry],
    collect() {
      this.reset();
      for (const state of reads.states()) this.set({ replica: state.name }, state.healthy ? 1 : 0);
    },
  });
}
