/**
 * The node delays TurboFan (src/shared/util/jit-tiering.ts): in a process where it was applied, a hot
 * function is optimized after about three times as many calls as with V8's default; the flag chosen
 * for this Node's V8 is one it knows, and nothing is printed. CI runs it under Node 20 (`npm test`) and
 * again under Node 22 and 24 (`npm run test:this-node`).
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { turbofanTieringFlag } from '../../src/shared/util/jit-tiering.js';

const MODULE = new URL('../../src/shared/util/jit-tiering.js', import.meta.url).href;

/**
 * Calls a small function until V8 reports it optimized by TurboFan (status bit 16), synchronously
 * compiled so the count is exact; answers the calls it took and what `delayTurbofanTierUp` returned.
 */
function callsUntilOptimized(applyNodeTiering: boolean): { calls: number; applied: string | null; stderr: string } {
  const script = `
    import { delayTurbofanTierUp } from ${JSON.stringify(MODULE)};
    const applied = (${applyNodeTiering} ? delayTurbofanTierUp() : undefined) ?? null;
    const f = new Function('a', 'let s = 0; for (let i = 0; i < 10; i++) s += a * i; return s;');
    const status = new Function('f', 'return %GetOptimizationStatus(f);');
    let calls = 1;
    for (; calls < 1e6; calls++) { f(calls); if (status(f) & 16) break; }
    console.log(JSON.stringify({ calls, applied }));`;
  const child = spawnSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`child failed: ${child.stderr}`);
  return { ...(JSON.parse(child.stdout) as { calls: number; applied: string | null }), stderr: child.stderr };
}

test('the flag chosen for this V8 is one it lists, and only V8 11 and 12 get one', (t) => {
  const flag = turbofanTieringFlag();
  if (flag !== undefined) {
    const name = flag.slice(0, flag.indexOf('='));
    const listed = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }).split('\n').some((line) => line.trim().startsWith(`${name} (`));
    t.true(listed, `${name} is not a flag of V8 ${process.versions.v8}`);
  }
  t.is(turbofanTieringFlag('11.3.244.8-node.38'), '--interrupt-budget=200000');
  t.is(turbofanTieringFlag('12.4.254.21-node.33'), '--invocation-count-for-turbofan=9000');
  t.is(turbofanTieringFlag('13.6.233.17-node.63'), undefined);
  t.is(turbofanTieringFlag('10.2.154.26-node.26'), undefined);
});

test('with the node tiering a hot function is optimized after at least twice as many calls, and nothing is printed', (t) => {
  const withDefault = callsUntilOptimized(false);
  const withNode = callsUntilOptimized(true);
  t.is(withNode.stderr, '');
  if (turbofanTieringFlag() === undefined) {
    // A V8 the node leaves as it is.
    t.is(withNode.applied, null);
    t.is(withNode.calls, withDefault.calls);
    return;
  }
  t.is(withNode.applied, turbofanTieringFlag() ?? null);
  t.true(withDefault.calls < 1e6, 'V8 optimized the function at all');
  t.true(withNode.calls >= 2 * withDefault.calls, `${withNode.calls} calls against ${withDefault.calls}`);
});
