/**
 * JSON text as actors answer it and transports write it: a string, or, for a large answer, its UTF-8
 * bytes.
 *
 * Why bytes: V8 keeps a string of 128 KiB or more in its large-object space, each one in memory mapped
 * for it alone, which the kernel faults in page by page and unmaps at the next full collection; and an
 * answer becomes such a string several times on its way out (flattened to cross threads, copied in on
 * the other side, flattened again with its envelope, turned into UTF-8 for the socket). 300 logs of
 * `eth_getLogs` (190 kB) cost ~2.5 ms of CPU that way against ~0.2 ms as bytes made once, handed over
 * to the transport without a copy and written to the socket as they are.
 */
export type JsonText = string | Uint8Array;

/** From this many characters on, an actor answers in bytes; below, a string is as cheap. */
export const JSON_BYTES_FROM = 32 * 1024;

const encoder = new TextEncoder();

/** Bytes made by `answerText`: nobody else holds them, so a channel may move them rather than copy them. */
const handedOver = new WeakSet<Uint8Array>();

/** Whether `value` is an answer's bytes that its channel should transfer (channel.ts). */
export function isHandedOver(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array && handedOver.has(value);
}

/**
 * An actor's answer made of `parts` in order: their concatenation as a string when short, else as
 * UTF-8 bytes in a buffer of their own, which the channel transfers to the transport.
 */
export function answerText(parts: readonly string[]): JsonText {
  let length = 0;
  for (const part of parts) length += part.length;
  if (length < JSON_BYTES_FROM) return parts.join('');
  let size = 0;
  for (const part of parts) size += Buffer.byteLength(part, 'utf8');
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) offset += encoder.encodeInto(part, bytes.subarray(offset)).written;
  handedOver.add(bytes);
  return bytes;
}

/** The parts of a JSON array of `items` (each already JSON text): `[`, the items with commas between, `]`. */
export function jsonArrayParts<T extends JsonText>(items: readonly T[]): (T | string)[] {
  const parts: (T | string)[] = ['['];
  items.forEach((item, i) => {
    if (i > 0) parts.push(',');
    parts.push(item);
  });
  parts.push(']');
  return parts;
}

/** `parts` one after the other: a string when all are strings, else bytes (strings in them as UTF-8). */
export function concatJsonText(parts: readonly JsonText[]): JsonText {
  if (parts.every((part) => typeof part === 'string')) return parts.join('');
  return Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part, 'utf8') : part)));
}

export function jsonTextToString(text: JsonText): string {
  return typeof text === 'string' ? text : Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('utf8');
}
