/**
 * Besu's own GraphQL spec fixtures (`shared/fixtures/besu/graphql/`) replayed against a real node
 * that imported Besu's test chain with `blocks import`, compared with the rules of the fixtures
 * README: the HTTP status, and the whole body deep-equal (key order ignored, numbers by value).
 *
 * As Besu's test does, a query without variables is sent as the bare query (`application/graphql`);
 * one with variables as JSON `{query, variables}`. Cases that only pass against Besu's test mocks
 * (`mock-dependent.txt`) are not counted; cases Basalt cannot pass for a stated reason are listed in
 * `besu-graphql-known-gaps.json` and run as `test.failing`, so one that starts passing fails the suite
 * until it is taken off the list (test/helpers/fixture-replay.ts).
 */
import { isDeepStrictEqual } from 'node:util';
import { postCase, replayFixtureFamily } from '../helpers/fixture-replay.js';
import type { NodeProcess } from '../helpers/node-process.js';
import { startBesuGraphqlTestNode } from '../helpers/parity-node.js';

interface Fixture {
  request: string;
  /** JSON text of the variables, in the four files that have any. */
  variables?: string;
  response: unknown;
  statusCode: number;
}

async function replay(node: NodeProcess, fixture: Fixture): Promise<string[]> {
  const init =
    fixture.variables === undefined
      ? { headers: { 'content-type': 'application/graphql' }, body: fixture.request }
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: fixture.request, variables: JSON.parse(fixture.variables) as unknown }) };
  const { found, body } = await postCase(node.graphqlUrl!, init, fixture.statusCode);
  if (body === undefined) return found;
  if (!isDeepStrictEqual(body, fixture.response)) {
    found.push(`body differs:\n  expected ${JSON.stringify(fixture.response)}\n  actual   ${JSON.stringify(body)}`);
  }
  return found;
}

replayFixtureFamily<Fixture>({ folder: 'graphql', family: 'graphql', knownGapsFile: 'besu-graphql-known-gaps.json', start: startBesuGraphqlTestNode, replay });
