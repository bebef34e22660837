/**
 * A state reader (src/reader/state-reader.ts) against a real chain in one process, wired to what the
 * chain actor serves readers: its answers equal the chain's own for the same calls (results, errors,
 * revert data, unknown blocks), at every block and at `latest` as the head moves; state values are
 * asked once and kept.
 */
import test from 'ava';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import type { Chain } from '../../src/chain/chain.js';
import { METHOD_REGISTRY, lookupMethod } from '../../src/shared/rpc/registry.js';
import { serveMethodsAsJsonText } from '../../src/shared/rpc/dispatch.js';
import { ChainStateStore } from '../../src/reader/state-reader.js';
import { revertingDeployCode, storeAndLogDeployCode } from '../helpers/contracts.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { candidate, openDevChain, proposeAndCommit, signedTx } from '../helpers/dev-chain.js';
import { openInProcessReader } from '../helpers/in-process-reader.js';
import { removeDataPath, tempDataPath } from '../helpers/node-process.js';
import { jsonTextToString, type JsonText } from '../../src/shared/rpc/json-text.js';

/** A method's answer as a transport gets it: the JSON text of the result, or the error object. */
async function answer(serve: (method: string, params: never) => Promise<JsonText>, method: string, raw: unknown[]): Promise<unknown> {
  const spec = lookupMethod(method)!;
  try {
    return JSON.parse(jsonTextToString(await serve(method, spec.parseParams(raw) as never)));
  } catch (err) {
    const { code, message, data } = err as { code?: number; message: string; data?: unknown };
    return { error: { code, message, data } };
  }
}

test('a state reader answers as the chain does, at each block and at latest as the head moves', async (t) => {
  const path = tempDataPath();
  let chain: Chain | undefined;
  try {
    chain = await openDevChain(path);
    const opened = chain;
    let valueAsks = 0;
    const { actor, reader } = await openInProcessReader(opened, 'test', (count) => (valueAsks += count));
    const toChain = actor.transportHandlers(0);
    const chainServe = async (method: string, params: never): Promise<JsonText> => toChain.rpc({ method, params });
    const readerServe = serveMethodsAsJsonText('reader', reader.handlers);

    const key = DEV_ACCOUNTS[0].privateKey;
    const sender = DEV_ACCOUNTS[0].address;
    await proposeAndCommit(opened, [candidate(signedTx(key, 0n, { data: storeAndLogDeployCode() })), candidate(signedTx(key, 1n, { data: revertingDeployCode() }))]);
    const deployed = await opened.store.getReceipts(opened.getHead().hash);
    const store = bytesToHex(deployed![0]!.contractAddress!);
    const reverting = bytesToHex(deployed![1]!.contractAddress!);
    const calls = (block: string): [string, unknown[]][] => [
      ['eth_getBalance', [sender, block]],
      ['eth_getBalance', ['0x00000000000000000000000000000000000c0ffe', block]],
      ['eth_getCode', [store, block]],
      ['eth_getStorageAt', [store, '0x0', block]],
      ['eth_call', [{ to: store, data: '0x' }, block]],
      ['eth_call', [{ to: reverting, data: '0x' }, block]],
      ['eth_call', [{ from: sender, to: store, data: '0x', value: '0x1' }, block, { [sender]: { balance: '0x0' } }]],
      ['eth_estimateGas', [{ from: sender, to: '0x00000000000000000000000000000000000c0ffe', value: '0x5' }, block === '0x99' ? 'latest' : block]],
      ['eth_estimateGas', [{ from: sender, to: store, data: '0x2a' }, block === '0x99' ? 'latest' : block]],
    ];
    const compare = async (block: string) => {
      for (const [method, raw] of calls(block)) {
        t.deepEqual(await answer(readerServe, method, raw), await answer(chainServe, method, raw), `${method} ${JSON.stringify(raw)}`);
      }
    };
    // The head moves: `latest` follows it, earlier blocks keep answering their own state.
    for (let i = 0; i < 3; i++) {
      await proposeAndCommit(opened, [candidate(signedTx(key, BigInt(2 + i), { value: BigInt(10 + i) }))]);
      for (const block of ['latest', 'pending', 'earliest', '0x1', '0x2', `0x${opened.getHead().number.toString(16)}`, '0x99', 'finalized']) await compare(block);
    }
    t.is(
      JSON.parse(jsonTextToString(await readerServe('eth_getBalance', lookupMethod('eth_getBalance')!.parseParams(['0x00000000000000000000000000000000000c0ffe', 'latest']) as never))),
      '0x21',
    );
    // Content-addressed values are asked for once: the same reads again ask the chain for nothing.
    const asked = valueAsks;
    await compare('0x2');
    t.is(valueAsks, asked);
    t.true(Object.keys(reader.handlers).every((name) => (METHOD_REGISTRY as Record<string, { owner: string }>)[name]!.owner === 'reader'));
  } finally {
    await chain?.close();
    removeDataPath(path);
  }
});

test('a state value the chain does not hold reads as missing, and is asked for again', async (t) => {
  let asks = 0;
  const store = new ChainStateStore({
    stateValues: async (keys) => {
      asks++;
      return keys.map((key) => (key === 'aa' ? hexToBytes('0x01') : null));
    },
  });
  t.is(await store.get('bb'), undefined);
  t.is(await store.get('bb'), undefined);
  t.deepEqual(await store.get('aa'), hexToBytes('0x01'));
  t.deepEqual(await store.get('aa'), hexToBytes('0x01'));
  t.is(asks, 3);
});
