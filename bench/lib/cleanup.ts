/**
 * Makes sure a benchmark stops what it started: cleanups run once, in reverse order, on normal
 * completion, on an error, on SIGINT/SIGTERM and when the run's time ceiling is reached.
 */
type Cleanup = () => Promise<void> | void;

const cleanups: Array<{ name: string; run: Cleanup }> = [];
let cleaning: Promise<void> | undefined;

/** Registers `run` to be called at the end of the benchmark; returns a function that unregisters it. */
export function onCleanup(name: string, run: Cleanup): () => void {
  const entry = { name, run };
  cleanups.push(entry);
  return () => {
    const index = cleanups.indexOf(entry);
    if (index >= 0) cleanups.splice(index, 1);
  };
}

/** Runs every registered cleanup (latest first); each gets at most `perStepMs`. */
export function runCleanups(perStepMs = 15_000): Promise<void> {
  cleaning ??= (async () => {
    while (cleanups.length > 0) {
      const { name, run } = cleanups.pop()!;
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(run),
          new Promise<void>((_, reject) => {
            timer = setTimeout(() => reject(new Error('timed out')), perStepMs);
          }),
        ]);
      } catch (err) {
        console.error(`cleanup "${name}" failed: ${err instanceof Error ? err.message : String(err)}`);
      } finally {
        clearTimeout(timer);
      }
    }
  })();
  return cleaning;
}

/**
 * Runs `main` with cleanups guaranteed, and a ceiling on the whole run: past `maxRunSeconds` the
 * benchmark is abandoned, cleaned up and exits with status 1.
 */
export function runBenchmark(main: () => Promise<void>, maxRunSeconds: number): void {
  let aborted = false;
  const abort = (reason: string, code: number): void => {
    aborted = true;
    console.error(reason);
    void runCleanups().finally(() => process.exit(code));
  };
  const ceiling = setTimeout(() => abort(`benchmark exceeded its ${maxRunSeconds} s ceiling; stopping`, 1), maxRunSeconds * 1000);
  ceiling.unref();
  process.once('SIGINT', () => abort('interrupted', 130));
  process.once('SIGTERM', () => abort('terminated', 143));
  main()
    .then(
      // A benchmark that found something wrong sets process.exitCode; process.exit below would drop it.
      () => runCleanups().then(() => Number(process.exitCode ?? 0)),
      async (err: unknown) => {
        // After an abort, failures of work whose processes were just stopped are expected noise.
        if (!aborted) console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
        await runCleanups();
        return 1;
      },
    )
    .then((code) => {
      clearTimeout(ceiling);
      // Anything left (a stray socket) must not keep the process alive.
      process.exit(code);
    });
}
