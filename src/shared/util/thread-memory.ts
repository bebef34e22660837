/**
 * What one thread's V8 isolate holds, in bytes. Every figure but the process' RSS is per isolate, so
 * each actor thread reports its own (over the control plane, src/shared/actors/control.ts) and the
 * supervisor puts them side by side: a heap that keeps growing under steady load names the thread
 * that leaks, while RSS alone cannot.
 */
export interface ThreadMemory {
  /** Live and not yet collected objects on the V8 heap. */
  heapUsedBytes: number;
  /** Heap reserved by V8 for this isolate (what the heap may grow into before a GC). */
  heapTotalBytes: number;
  /** Memory outside the heap held by JS objects (buffers, native bindings), array buffers included. */
  externalBytes: number;
  /** Of `externalBytes`: ArrayBuffer and Buffer backing stores. */
  arrayBuffersBytes: number;
}

/**
 * This thread's figures; cheap (no heap walk). When the process runs with `--expose-gc` (for a soak or
 * a test: `NODE_OPTIONS=--expose-gc`) garbage is collected first, so that heap used is what the
 * thread really holds rather than a point on V8's saw-tooth of lazy collection.
 */
export function threadMemory(): ThreadMemory {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  return {
    heapUsedBytes: usage.heapUsed,
    heapTotalBytes: usage.heapTotal,
    externalBytes: usage.external,
    arrayBuffersBytes: usage.arrayBuffers,
  };
}
