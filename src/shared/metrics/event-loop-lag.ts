/**
 * How late a thread's event loop runs: Node's event-loop delay histogram, read and restarted at each
 * scrape, so that every figure covers the time since the previous one (as prom-client's own
 * `nodejs_eventloop_lag_*` do for the main thread). One monitor per thread: each worker's loop is its own.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** Event-loop lag over one interval, in seconds; all 0 when the interval saw no sample. */
export interface EventLoopLag {
  meanSeconds: number;
  p50Seconds: number;
  p90Seconds: number;
  p99Seconds: number;
  maxSeconds: number;
}

/** How often the monitor's timer fires, in ms (prom-client's default precision). */
const RESOLUTION_MS = 10;
const NS_PER_SECOND = 1e9;

export class EventLoopLagMonitor {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });

  constructor() {
    this.histogram.enable();
  }

  /** The lag since the previous call (or since the monitor started), then starts a new interval. */
  take(): EventLoopLag {
    const h = this.histogram;
    // Node measures the time between the monitor's timer firings, resolution included: an idle loop
    // reads 10 ms. The lag is what exceeds it.
    const lag = (ns: number) => Math.max(0, ns / NS_PER_SECOND - RESOLUTION_MS / 1000);
    const taken =
      h.count === 0
        ? { meanSeconds: 0, p50Seconds: 0, p90Seconds: 0, p99Seconds: 0, maxSeconds: 0 }
        : {
            meanSeconds: lag(h.mean),
            p50Seconds: lag(h.percentile(50)),
            p90Seconds: lag(h.percentile(90)),
            p99Seconds: lag(h.percentile(99)),
            maxSeconds: lag(h.max),
          };
    h.reset();
    return taken;
  }
}
