/**
 * Runs jobs one at a time in the order they arrived, across every port a thread serves, with a turn of
 * the event loop every few milliseconds.
 *
 * Why: Node hands a MessagePort's messages to their handler in a loop that keeps taking messages that
 * arrive meanwhile (up to 1,000 per port and turn). A thread that answers each message before taking
 * the next — a state reader runs one call at a time — then serves one busy port for a whole loop while
 * the others wait: with two transport threads, every connection of one thread waited 70–90 ms about once
 * a second (eth_call p99 of 85–95 ms at a p50 of 3 ms). Queued here instead, the jobs of a turn leave the
 * event loop free to take every port's new messages before the next turn's start.
 */
/**
 * How long jobs run back to back before the event loop takes new messages: a turn per job cost 12–19 %
 * of eth_call's throughput; a few milliseconds keep the ports' waits that short.
 */
const TURN_MS = 2;

export class ArrivalOrder {
  private readonly queue: (() => Promise<void>)[] = [];
  private running = false;

  /** Resolves with what `job` resolves to, once the jobs that arrived before it have run. */
  run<T>(job: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push(() => job().then(resolve, reject));
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.next());
      }
    });
  }

  private async next(): Promise<void> {
    const turnEnds = performance.now() + TURN_MS;
    for (;;) {
      const job = this.queue.shift();
      if (job === undefined) {
        this.running = false;
        return;
      }
      await job();
      if (performance.now() >= turnEnds) break;
    }
    setImmediate(() => void this.next());
  }
}
