// Load shedding: while the process is overloaded, heavy requests (heavy-requests.ts) are refused with 503, so
// that the event loop stays free for the light ones (/me, a page of games) and for the heavy requests already
// running. @fastify/under-pressure samples the event loop's delay (its mean over each second) and the heap;
// it is registered without thresholds of its own, which would refuse every request alike, and the heavy
// requests ask `pressure()` instead.
import { getHeapStatistics } from 'node:v8';
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import { HEAVY_DEFAULTS } from '../../api/heavy-kinds.ts';

export interface SheddingSettings {
  /** Mean event-loop delay over the last second above which heavy requests are refused; 0: never. */
  maxEventLoopDelayMs: number;
  /** Share of V8's heap limit (percent) in use above which heavy requests are refused; 0: never. */
  maxHeapPercent: number;
}

export const DEFAULT_SHEDDING: SheddingSettings = {
  maxEventLoopDelayMs: HEAVY_DEFAULTS.shedEventLoopDelayMs,
  maxHeapPercent: HEAVY_DEFAULTS.shedHeapPercent,
};

/** How often the load is sampled. */
const SAMPLE_MS = 1000;

/** What overloads the process right now, in words for the 503's description, or undefined. */
export type Pressure = () => string | undefined;

export function loadShedding(app: FastifyInstance, settings: SheddingSettings = DEFAULT_SHEDDING): Pressure {
  const { maxEventLoopDelayMs, maxHeapPercent } = settings;
  if (maxEventLoopDelayMs === 0 && maxHeapPercent === 0) return () => undefined;
  app.register(underPressure, { sampleInterval: SAMPLE_MS });
  const maxHeapBytes = (getHeapStatistics().heap_size_limit * maxHeapPercent) / 100;
  return () => {
    const { eventLoopDelay, heapUsed } = app.memoryUsage();
    if (maxEventLoopDelayMs > 0 && eventLoopDelay > maxEventLoopDelayMs)
      return `its event loop is ${Math.round(eventLoopDelay)} ms late`;
    if (maxHeapPercent > 0 && heapUsed > maxHeapBytes) return `its heap is over ${maxHeapPercent} % full`;
    return undefined;
  };
}
