/**
 * The state reader threads start at the first call that needs one: idle, a node without them is
 * ~25 MB of RSS smaller per thread (an isolate with the EVM loaded), and many nodes never answer an
 * eth_call. A transport thread raises this flag when it first sends a call to a reader; the
 * supervisor waits on it and starts the readers. Calls sent before they run wait in the channels'
 * ports (a MessagePort keeps what was posted to it until its thread listens), so none is lost.
 */

const FLAG = 0;

export function createReaderDemand(): SharedArrayBuffer {
  return new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
}

/** Called by a transport thread at its first call for a reader; only the first call in the node wakes the supervisor. */
export function raiseReaderDemand(buffer: SharedArrayBuffer): void {
  const flag = new Int32Array(buffer);
  if (Atomics.compareExchange(flag, FLAG, 0, 1) === 0) Atomics.notify(flag, FLAG);
}

/** Atomics.waitAsync (ES2024, in Node since 16): this project's lib is ES2023. */
type WaitAsync = (array: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };

/** Resolves once some transport thread has raised the demand (at once if one already has). */
export async function readerDemanded(buffer: SharedArrayBuffer): Promise<void> {
  const wait = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync(new Int32Array(buffer), FLAG, 0);
  if (wait.async) await wait.value;
}
