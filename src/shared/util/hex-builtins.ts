/**
 * `Uint8Array.prototype.toHex` and `Uint8Array.fromHex` (ES2026, "Uint8Array to/from base64 and hex")
 * where the running Node lacks them (20, 22 and 24 do), on Node's Buffer. @noble/hashes checks for
 * them once, when it loads, and then converts every byte array through them instead of its
 * JavaScript loop: that loop builds a hex string two characters at a time, ~32 string objects for
 * a 32-byte key, and ethereumjs turns every account address and storage slot it caches or warms into
 * such a string (`bytesToUnprefixedHex` is noble's `bytesToHex`), several per SLOAD and SSTORE.
 *
 * So each thread's entry imports this module before anything else: it must run before noble's
 * `utils.js` is evaluated in that thread. A Node that has the built-ins keeps its own.
 *
 * `fromHex` refuses what noble's own loop refuses, with its messages (noble rethrows them as
 * RangeError), so a conversion fails the same way with or without the built-ins. The gain is in
 * `toHex` (Buffer's hex writer, one string), not in `fromHex` (a loop like noble's).
 */
import { Buffer } from 'node:buffer';

interface HexBuiltins {
  toHex?: (this: Uint8Array) => string;
}
interface HexConstructor {
  fromHex?: (hex: string) => Uint8Array;
}

/**
 * Buffer's own hex writer, what `buffer.toString('hex')` calls: called on the array directly, without
 * a Buffer made around it first (which costs as much as the conversion for a 32-byte key).
 */
const hexSlice = (Buffer.prototype as Buffer & { hexSlice?: (this: Uint8Array, start: number, end: number) => string }).hexSlice;

/** Lower-case hex of `bytes`, without `0x`. */
export function unprefixedHexOf(bytes: Uint8Array): string {
  if (hexSlice !== undefined) return hexSlice.call(bytes, 0, bytes.length);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

function toHex(this: Uint8Array): string {
  return unprefixedHexOf(this);
}

/** The value of each ASCII hex digit, -1 for every other character code below 128. */
const DIGIT_VALUES = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) {
  DIGIT_VALUES[digit.toString(16).charCodeAt(0)] = digit;
  DIGIT_VALUES[digit.toString(16).toUpperCase().charCodeAt(0)] = digit;
}

/** As noble's loop (a Buffer round trip is several times slower for the short strings of keys and addresses). */
function fromHex(hex: string): Uint8Array {
  if (typeof hex !== 'string') throw new TypeError('Uint8Array.fromHex expects a string');
  if (hex.length % 2 !== 0) throw new SyntaxError(`hex string expected, got unpadded hex of length ${hex.length}`);
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0, at = 0; i < bytes.length; i++, at += 2) {
    const high = hex.charCodeAt(at);
    const low = hex.charCodeAt(at + 1);
    const value = ((high < 128 ? DIGIT_VALUES[high]! : -1) << 4) | (low < 128 ? DIGIT_VALUES[low]! : -1);
    if (value < 0) throw new SyntaxError(`hex string expected, got non-hex character "${hex.slice(at, at + 2)}" at index ${at}`);
    bytes[i] = value;
  }
  return bytes;
}

/** Whether this thread's hex conversions are the runtime's own or the ones installed here. */
export const HEX_BUILTINS: 'native' | 'installed' = install();

function install(): 'native' | 'installed' {
  const prototype = Uint8Array.prototype as Uint8Array & HexBuiltins;
  const constructor = Uint8Array as typeof Uint8Array & HexConstructor;
  if (typeof prototype.toHex === 'function' && typeof constructor.fromHex === 'function') return 'native';
  // Both or neither: noble uses them only as a pair.
  Object.defineProperty(Uint8Array.prototype, 'toHex', { value: toHex, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(Uint8Array, 'fromHex', { value: fromHex, writable: true, configurable: true, enumerable: false });
  return 'installed';
}
