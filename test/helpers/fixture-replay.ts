/**
 * Replaying one family of Besu's spec fixtures (`shared/fixtures/besu/<family>/`) against one real
 * node, as ava tests: one test per runnable case. Cases that only pass against Besu's test mocks
 * (`mock-dependent.txt`) are not counted. Cases Basalt cannot pass for a stated reason are listed in
 * a known-gaps file (`test/<file>.json`: case name → reason); they run as `test.failing`, so one that
 * starts passing fails the suite until it is taken off the list.
 */
import test, { type ExecutionContext } from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BESU_FIXTURES, REPO_ROOT, removeDataPath, type NodeProcess } from './node-process.js';

export interface FixtureFamily<F> {
  /** The family's folder under the fixtures, e.g. `rpc/eth` or `graphql`. */
  folder: string;
  /** Its name in `mock-dependent.txt` (`rpc/<case>`, `graphql/<case>`) and in the summary line. */
  family: string;
  /** The known-gaps file under `test/`. */
  knownGapsFile: string;
  /** Starts the node every case is replayed against (its data path is removed afterwards). */
  start(): Promise<NodeProcess>;
  /** Sends one case and lists how the answer differs from the expected one (empty: it passes). */
  replay(node: NodeProcess, fixture: F): Promise<string[]>;
}

/** `<family>/<name>` entries of mock-dependent.txt: answers produced by Besu's test mocks. */
function mockDependent(family: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of readFileSync(join(BESU_FIXTURES, 'mock-dependent.txt'), 'utf8').split('\n')) {
    const match = /^(\S+)\/(\S+)\s+(.*)$/.exec(line.trim());
    if (match && match[1] === family) entries.set(match[2]!, match[3]!);
  }
  return entries;
}

/** The answer to one case: its body parsed (undefined when it is not JSON) and its text. */
export interface CaseAnswer {
  /** A status other than the expected one, or a body that is not JSON. */
  found: string[];
  body: unknown;
  text: string;
}

/** POSTs one case and reads the answer, noting a status other than `statusCode` and a body that is not JSON. */
export async function postCase(url: string, init: { headers: Record<string, string>; body: string }, statusCode: number): Promise<CaseAnswer> {
  const { status, text } = await inTurn(async () => {
    const res = await fetch(url, { method: 'POST', ...init });
    return { status: res.status, text: await res.text() };
  });
  const res = { status };
  const found: string[] = [];
  if (res.status !== statusCode) found.push(`HTTP status ${res.status} ≠ ${statusCode}`);
  try {
    return { found, body: JSON.parse(text) as unknown, text };
  } catch {
    return { found: [...found, `body is not JSON: ${text.slice(0, 200)}`], body: undefined, text };
  }
}

/**
 * ava starts every case at once, and fetch opens a connection per request in flight: past the node's
 * --rpc-http-max-active-connections (80 in Besu) the rest would be refused there. A client keeps a pool.
 */
const MAX_IN_FLIGHT = 16;
let inFlight = 0;
const waiting: Array<() => void> = [];

async function inTurn<T>(request: () => Promise<T>): Promise<T> {
  while (inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => waiting.push(resolve));
  inFlight++;
  try {
    return await request();
  } finally {
    inFlight--;
    waiting.shift()?.();
  }
}

export function replayFixtureFamily<F>(spec: FixtureFamily<F>): void {
  const folder = join(BESU_FIXTURES, spec.folder);
  const knownGaps = JSON.parse(readFileSync(join(REPO_ROOT, 'test', spec.knownGapsFile), 'utf8')) as Record<string, string>;
  const mocks = mockDependent(spec.family);
  const fixtures = readdirSync(folder)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((file) => [file.slice(0, -'.json'.length), JSON.parse(readFileSync(join(folder, file), 'utf8')) as F] as const);
  const runnable = fixtures.filter(([name]) => !mocks.has(name));

  let node: NodeProcess | undefined;
  const outcome = { passed: 0, listedStillFailing: 0 };

  test.before(async () => {
    node = await spec.start();
  });

  test.after.always(async () => {
    if (node) {
      await node.stop();
      removeDataPath(node.dataPath);
    }
    console.log(
      `Besu ${spec.folder} fixtures: ${fixtures.length} cases, ${mocks.size} mock-dependent (not counted), ` +
        `${runnable.length} runnable: ${outcome.passed} pass, ${Object.keys(knownGaps).length} listed as known gaps ` +
        `(${outcome.listedStillFailing} of them still failing).`,
    );
  });

  test('every known gap names a runnable fixture and gives a reason', (t) => {
    const names = new Set(runnable.map(([name]) => name));
    for (const [name, reason] of Object.entries(knownGaps)) {
      t.true(names.has(name), `${name} is not a runnable fixture`);
      t.true(reason.trim().length > 20, `${name} needs a reason`);
    }
  });

  for (const [name, fixture] of runnable) {
    const gap = knownGaps[name];
    const check = async (t: ExecutionContext) => {
      const found = await spec.replay(node!, fixture);
      if (found.length === 0) {
        if (gap === undefined) outcome.passed++;
        t.pass();
      } else {
        if (gap !== undefined) outcome.listedStillFailing++;
        t.fail(found.join('\n'));
      }
    };
    if (gap === undefined) test(`fixture ${name}`, check);
    else test.failing(`fixture ${name} (known gap: ${gap})`, check);
  }
}
