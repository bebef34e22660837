/**
 * Two per-call costs of `@ethereumjs/evm` 10 that are pure functions of their inputs, memoised. Both
 * reach into the library's internals; `tuneEvm` throws when those are not where it expects them (a
 * library upgrade must look again, not silently lose the speed-up), and a unit test runs it.
 */
import type { Common } from '@ethereumjs/common';

interface JumpAnalysis {
  jumps: Uint8Array;
  pushes: Record<number, bigint>;
  opcodesCached: unknown[];
}
interface InterpreterPrototype {
  _getValidJumpDestinations(this: { _evm: { _opcodeMap: object } }, code: Uint8Array): JumpAnalysis;
}

let jumpAnalysisCached: Promise<void> | undefined;

/**
 * The interpreter analyses a contract's jump destinations and push values on every call that jumps:
 * for a 3 kB ERC-20 a 3 kB array, a 3 kB pointer array and a bigint per PUSH, each call, then garbage.
 * The analysis depends only on the code and on the opcode table of the fork, so it is kept per code
 * buffer (state managers hand out the same buffer for the same code while it is cached) and opcode
 * table, in weak maps: nothing is held once the code or the table is gone. Nothing mutates the
 * result (the interpreter only reads `validJumps`, `cachedPushes` and the opcode entries).
 */
export function cacheJumpAnalysis(): Promise<void> {
  jumpAnalysisCached ??= (async () => {
    // The Interpreter class is not exported; its module is the one the EVM loaded (same URL).
    const url = new URL('./interpreter.js', import.meta.resolve('@ethereumjs/evm'));
    const { Interpreter } = (await import(url.href)) as { Interpreter?: { prototype: InterpreterPrototype } };
    const prototype = Interpreter?.prototype;
    const analyse = prototype?._getValidJumpDestinations;
    if (prototype === undefined || typeof analyse !== 'function') throw new Error('@ethereumjs/evm: Interpreter._getValidJumpDestinations not found');
    const byCode = new WeakMap<Uint8Array, WeakMap<object, JumpAnalysis>>();
    prototype._getValidJumpDestinations = function (code) {
      const opcodes = this._evm._opcodeMap;
      let byTable = byCode.get(code);
      if (byTable === undefined) {
        byTable = new WeakMap();
        byCode.set(code, byTable);
      }
      let analysis = byTable.get(opcodes);
      if (analysis === undefined) {
        analysis = analyse.call(this, code);
        byTable.set(opcodes, analysis);
      }
      return analysis;
    };
  })();
  return jumpAnalysisCached;
}

/**
 * `Common.isActivatedEIP` scans an array of every EIP of the fork (about 80), and the interpreter asks
 * it several times per opcode. This answers from a set rebuilt whenever Common rebuilds the array (on
 * a hardfork or EIP change).
 */
export function fastEipLookup(common: Common): void {
  const internals = common as unknown as { _activatedEIPsCache?: number[]; _buildActivatedEIPsCache?: () => void };
  const rebuild = internals._buildActivatedEIPsCache;
  if (!Array.isArray(internals._activatedEIPsCache) || typeof rebuild !== 'function') {
    throw new Error('@ethereumjs/common: the activated-EIP cache is not where it was');
  }
  let active = new Set(internals._activatedEIPsCache);
  internals._buildActivatedEIPsCache = () => {
    rebuild.call(common);
    active = new Set(internals._activatedEIPsCache);
  };
  common.isActivatedEIP = (eip: number) => active.has(eip);
}
