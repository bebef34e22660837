/**
 * Collects items pushed during one turn of the event loop and hands them to `flush` together on the
 * next (setImmediate): one message to another actor instead of one per item under a burst.
 */
export function perTick<T>(flush: (items: T[]) => void): (item: T) => void {
  let pending: T[] = [];
  return (item) => {
    if (pending.length === 0) {
      setImmediate(() => {
        const items = pending;
        pending = [];
        flush(items);
      });
    }
    pending.push(item);
  };
}
