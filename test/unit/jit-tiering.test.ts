/**
 * The node delays TurboFan (src/shared/util/jit-tiering.ts): in a process where it was applied, a hot
 * function is optimized after about three times as many calls as with V8's default, and on a V8
 * without the flag nothing is set and nothing is printed.
 */
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { hasInterruptBudgetFlag } from '../../src/shared/util/jit-tiering.js';

const MODULE = new URL('../../src/shared/util/jit-tiering.js', import.meta.url).href;

/**
 * Calls a small function until V8 reports it optimized by TurboFan (status bit 16), synchronously
 * compiled so the count is exact; answers the calls it took and what `delayTurbofanTierUp` returned.
 */
function callsUntilOptimized(applyNodeTiering: boolean): { calls: number; applied: boolean; stderr: string } {
  const script = `
    import { delayTurbofanTierUp } from ${JSON.stringify(MODULE)};
    const applied = ${applyNodeTiering} ? delayTurbofanTierUp() : false;
    const f = new Function('a', 'let s = 0; for (let i = 0; i < 10; i++) s += a * i; return s;');
    const status = new Function('f', 'return %GetOptimizationStatus(f);');
    let calls = 1;
    for (; calls < 1e6; calls++) { f(calls); if (status(f) & 16) break; }
    console.log(JSON.stringify({ calls, applied }));`;
  const child = spawnSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`child failed: ${child.stderr}`);
  return { ...(JSON.parse(child.stdout) as { calls: number; applied: boolean }), stderr: child.stderr };
}

test('the gate says V8 has the flag exactly when this Node lists it', (t) => {
  const listed = /^\s+--interrupt-budget \(/m.test(execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' }));
  t.is(hasInterruptBudgetFlag(), listed);
  t.true(hasInterruptBudgetFlag('11.3.244.8-node.38'));
  t.false(hasInterruptBudgetFlag('12.4.254.21-node.33'));
});

test('with the node tiering a hot function is optimized after at least twice as many calls, and nothing is printed', (t) => {
  const withDefault = callsUntilOptimized(false);
  const withNode = callsUntilOptimized(true);
  t.is(withNode.stderr, '');
  if (!hasInterruptBudgetFlag()) {
    // A V8 without the flag: the node leaves tiering as it is.
    t.false(withNode.applied);
    t.is(withNode.calls, withDefault.calls);
    return;
  }
  t.true(withNode.applied);
  t.true(withDefault.calls < 1e6, 'V8 optimized the function at all');
  t.true(withNode.calls >= 2 * withDefault.calls, `${withNode.calls} calls against ${withDefault.calls}`);
});
