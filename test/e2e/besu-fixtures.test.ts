/**
 * Besu's own JSON-RPC spec fixtures (`shared/fixtures/besu/rpc/eth/`) replayed against a real node
 * that imported Besu's test chain with `blocks import`, compared with the rules of the fixtures
 * README (status, ids, results with key order, exact error text).
 *
 * Cases that only pass against Besu's test mocks (`mock-dependent.txt`) are not counted. Cases that
 * Basalt cannot pass for a stated reason are listed in `besu-known-gaps.json`; they run as
 * `test.failing`, so one that starts passing fails the suite until it is taken off the list
 * (test/helpers/fixture-replay.ts).
 */
import { postCase, replayFixtureFamily } from '../helpers/fixture-replay.js';
import { startBesuTestChainNode } from '../helpers/parity-node.js';
import type { NodeProcess } from '../helpers/node-process.js';

interface ExpectedResponse {
  jsonrpc: string;
  id: unknown;
  result?: unknown;
  error?: unknown;
}

interface Fixture {
  request: unknown;
  response: ExpectedResponse | ExpectedResponse[];
  statusCode: number;
}

/**
 * Besu's normalisation of `error` strings inside a result (createAccessList, simulate): the many
 * wordings of one EVM failure become one.
 */
function normaliseErrorText(text: string): string {
  const lower = text.toLowerCase();
  if (lower.includes('out of gas') || lower.includes('insufficient gas')) return 'out of gas';
  if (lower.includes('stack underflow')) return 'stack underflow';
  if (lower.includes('stack overflow')) return 'stack overflow';
  if (lower.includes('invalid opcode')) return 'invalid opcode';
  if (lower.includes('write protection')) return 'write protection';
  if (lower.includes('invalid jump destination') || lower.includes('invalid jump')) return 'invalid jump destination';
  if (lower.includes('precompile')) return 'precompile failure';
  if (lower.includes('invalid input length')) return 'invalid input length';
  return text;
}

function normaliseResult(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normaliseResult);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      out[key] = key === 'error' && typeof member === 'string' ? normaliseErrorText(member) : normaliseResult(member);
    }
    return out;
  }
  return value;
}

/** Differences between one reply and its expected answer, per the README's rules 3–6. */
function differences(actual: unknown, expected: ExpectedResponse): string[] {
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`not a JSON-RPC object: ${JSON.stringify(actual)}`];
  const reply = actual as Record<string, unknown>;
  const found: string[] = [];
  if (JSON.stringify(reply.id) !== JSON.stringify(expected.id)) found.push(`id ${JSON.stringify(reply.id)} ≠ ${JSON.stringify(expected.id)}`);
  if (reply.jsonrpc !== expected.jsonrpc) found.push(`jsonrpc ${JSON.stringify(reply.jsonrpc)}`);
  if ('result' in expected) {
    if (!('result' in reply)) {
      found.push(`expected a result, got ${JSON.stringify(reply.error)}`);
    } else {
      const want = JSON.stringify(normaliseResult(expected.result), null, 2);
      const got = JSON.stringify(normaliseResult(reply.result), null, 2);
      if (want !== got) found.push(`result differs:\n  expected ${JSON.stringify(expected.result)}\n  actual   ${JSON.stringify(reply.result)}`);
    }
  }
  if ('error' in expected) {
    const squash = (value: unknown) => JSON.stringify(value).replace(/\s/g, '');
    if (!('error' in reply)) found.push(`expected error ${JSON.stringify(expected.error)}, got result ${JSON.stringify(reply.result)}`);
    else if (squash(reply.error) !== squash(expected.error)) {
      found.push(`error differs:\n  expected ${JSON.stringify(expected.error)}\n  actual   ${JSON.stringify(reply.error)}`);
    }
  }
  return found;
}

async function replay(node: NodeProcess, fixture: Fixture): Promise<string[]> {
  const { found, body, text } = await postCase(node.url, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(fixture.request) }, fixture.statusCode);
  if (body === undefined) return found;
  if (Array.isArray(fixture.response)) {
    if (!Array.isArray(body)) return [...found, `expected a batch reply, got ${text.slice(0, 200)}`];
    fixture.response.forEach((expected, i) => found.push(...differences(body[i], expected).map((d) => `[${i}] ${d}`)));
    return found;
  }
  return [...found, ...differences(body, fixture.response)];
}

replayFixtureFamily<Fixture>({ folder: 'rpc/eth', family: 'rpc', knownGapsFile: 'besu-known-gaps.json', start: startBesuTestChainNode, replay });
