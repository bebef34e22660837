/**
 * hex-builtins.ts: with it loaded first, @noble/hashes (and so ethereumjs' bytesToHex and hexToBytes)
 * converts through Uint8Array.prototype.toHex / Uint8Array.fromHex, and every conversion gives what
 * noble's own JavaScript loop gives, the same bytes or the same error. Each side runs in a thread of
 * its own, since noble looks for the built-ins once, when it loads.
 */
import test from 'ava';
import fc from 'fast-check';
import { Worker } from 'node:worker_threads';

const HEX_BUILTINS = new URL('../../src/shared/util/hex-builtins.js', import.meta.url).href;

type Outcome = { hex: string } | { bytes: number[] } | { error: string; message: string };

interface Conversions {
  builtins: string;
  toHex: Outcome[];
  fromHex: Outcome[];
  /** Calls noble made to Uint8Array.prototype.toHex / Uint8Array.fromHex while converting. */
  builtinCalls: number;
}

/** Converts every input with noble's bytesToHex and hexToBytes in a new thread, with or without hex-builtins.ts loaded first. */
function convertInThread(withBuiltins: boolean, bytes: number[][], hex: string[]): Promise<Conversions> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      const builtins = workerData.withBuiltins ? (await import(workerData.builtinsUrl)).HEX_BUILTINS : 'none';
      const { bytesToHex, hexToBytes } = await import('@noble/hashes/utils.js');
      let builtinCalls = 0;
      const toHex = Uint8Array.prototype.toHex, fromHex = Uint8Array.fromHex;
      if (toHex) Uint8Array.prototype.toHex = function () { builtinCalls++; return toHex.call(this); };
      if (fromHex) Uint8Array.fromHex = (s) => { builtinCalls++; return fromHex(s); };
      const outcome = (f) => { try { return f(); } catch (e) { return { error: e.constructor.name, message: e.message }; } };
      parentPort.postMessage({
        builtins,
        // A view into a larger buffer, as most byte arrays of a node are (slices of RLP, of messages).
        toHex: workerData.bytes.map((b) => outcome(() => ({ hex: bytesToHex(Uint8Array.from([7, ...b, 9]).subarray(1, 1 + b.length)) }))),
        fromHex: workerData.hex.map((h) => outcome(() => {
          const out = hexToBytes(h);
          if (!(out instanceof Uint8Array) || out.byteLength !== out.buffer.byteLength) throw new Error('not a Uint8Array of its own');
          return { bytes: [...out] };
        })),
        builtinCalls,
      });
    })();`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { withBuiltins, builtinsUrl: HEX_BUILTINS, bytes, hex } });
    worker.once('message', (result: Conversions) => {
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

const HEX_CHARS = '0123456789abcdefABCDEF';

test('noble converts through the installed built-ins and gets what its own loop gets, bytes and errors alike', async (t) => {
  const bytes = [[], [0], [255], [0, 1, 2, 0xab, 0xcd, 0xef], ...fc.sample(fc.uint8Array({ maxLength: 80 }), 300).map((b) => [...b])];
  const hex = [
    '',
    '00',
    'ABcdEF',
    '0',
    'abc',
    'zz',
    '0g',
    'g0',
    '12 4',
    '1234xx',
    '0x12',
    'ÿÿ',
    ...fc.sample(fc.string({ unit: fc.constantFrom(...HEX_CHARS), maxLength: 70 }), 200),
    ...fc.sample(fc.string({ unit: fc.constantFrom(...HEX_CHARS, 'g', ' ', 'x', '-', 'é'), maxLength: 20 }), 200),
  ];
  const [loop, builtin] = await Promise.all([convertInThread(false, bytes, hex), convertInThread(true, bytes, hex)]);
  t.is(loop.builtins, 'none');
  const nativeBuiltins = typeof (Uint8Array.prototype as { toHex?: unknown }).toHex === 'function';
  t.is(builtin.builtins, nativeBuiltins ? 'native' : 'installed');
  if (!nativeBuiltins) t.is(loop.builtinCalls, 0, 'without them noble uses its own loop');
  t.true(builtin.builtinCalls >= bytes.length, 'with them loaded first, noble calls them');
  t.deepEqual(builtin.toHex, loop.toHex);
  t.deepEqual(builtin.fromHex, loop.fromHex);
  t.true(loop.fromHex.some((o) => 'error' in o && /non-hex character/.test(o.message)), 'the inputs include refused characters');
  t.true(loop.fromHex.some((o) => 'error' in o && /unpadded hex/.test(o.message)), 'the inputs include odd lengths');
});
