/**
 * Besu's own GraphQL spec fixtures (`shared/fixtures/besu/graphql/`) replayed against a real node
 * that imported Besu's test chain with `blocks import`, compared with the rules of the fixtures
 * README: the HTTP status, and the whole body deep-equal (key order ignored, numbers by value).
 *
 * As Besu's test does, a query without variables is sent as the bare query (`application/graphql`);
 * one with variables as JSON `{query, variables}`. Cases that only pass against Besu's test mocks
 * (`mock-dependent.txt`) are not counted; cases Basalt cannot pass for a stated reason are listed in
 * `besu-graphql-known-gaps.json` and run as `test.failing`, so one that starts passing fails the suite
 * until it is taken off the list.
 */
import test, { type ExecutionContext } from 'ava';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { BESU_FIXTURES, REPO_ROOT, removeDataPath } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { startBesuGraphqlTestNode } from '../helpers/parity-node.js';

const FIXTURES = join(BESU_FIXTURES, 'graphql');

interface Fixture {
  request: string;
  /** JSON text of the variables, in the four files that have any. */
  variables?: string;
  response: unknown;
  statusCode: number;
}

/** `graphql/<name>` entries of mock-dependent.txt: answers produced by Besu's test mocks. */
function mockDependent(): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of readFileSync(join(BESU_FIXTURES, 'mock-dependent.txt'), 'utf8').split('\n')) {
    const match = /^graphql\/(\S+)\s+(.*)$/.exec(line.trim());
    if (match) entries.set(match[1]!, match[2]!);
  }
  return entries;
}

const knownGaps = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'besu-graphql-known-gaps.json'), 'utf8')) as Record<string, string>;
const mocks = mockDependent();
const fixtures = readdirSync(FIXTURES)
  .filter((name) => name.endsWith('.json'))
  .sort()
  .map((file) => [file.slice(0, -'.json'.length), JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as Fixture] as const);
const runnable = fixtures.filter(([name]) => !mocks.has(name));

async function replay(node: NodeProcess, fixture: Fixture): Promise<string[]> {
  const init =
    fixture.variables === undefined
      ? { headers: { 'content-type': 'application/graphql' }, body: fixture.request }
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: fixture.request, variables: JSON.parse(fixture.variables) as unknown }) };
  const res = await fetch(node.graphqlUrl!, { method: 'POST', ...init });
  const text = await res.text();
  const found: string[] = [];
  if (res.status !== fixture.statusCode) found.push(`HTTP status ${res.status} ≠ ${fixture.statusCode}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [...found, `body is not JSON: ${text.slice(0, 200)}`];
  }
  if (!isDeepStrictEqual(body, fixture.response)) {
    found.push(`body differs:\n  expected ${JSON.stringify(fixture.response)}\n  actual   ${JSON.stringify(body)}`);
  }
  return found;
}

let node: NodeProcess | undefined;
const outcome = { passed: 0, listedStillFailing: 0 };

test.before(async () => {
  node = await startBesuGraphqlTestNode();
});

test.after.always(async () => {
  if (node) {
    await node.stop();
    removeDataPath(node.dataPath);
  }
  console.log(
    `Besu graphql fixtures: ${fixtures.length} cases, ${mocks.size} mock-dependent (not counted), ` +
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
    const found = await replay(node!, fixture);
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
