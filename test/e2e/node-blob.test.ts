/**
 * A blob (type 3) transaction on the dev network (Cancun): admitted with its KZG proofs checked,
 * mined with its blob gas counted, served with the blob fields.
 */
import test from 'ava';
import { Mainnet, createCustomCommon } from '@ethereumjs/common';
import { createBlob4844Tx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes } from '@ethereumjs/util';
import { loadKZG } from 'kzg-wasm';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, startNode } from '../helpers/node-process.js';

test('a blob transaction is admitted, mined and served; a blob that does not match its proof is refused', async (t) => {
  // KZG loads twice (here, to make the blob, and in the node's decode threads): ~20 s each on an idle machine.
  t.timeout(300_000);
  const [kzg, node] = await Promise.all([loadKZG(), startNode()]);
  try {
    const common = createCustomCommon({ chainId: 1337 }, Mainnet, { hardfork: 'cancun', customCrypto: { kzg } });
    const key = hexToBytes(DEV_ACCOUNTS[2].privateKey as `0x${string}`);
    const blobTx = (nonce: bigint) =>
      createBlob4844Tx(
        {
          chainId: 1337n,
          nonce,
          gasLimit: 21_000n,
          maxFeePerGas: 10n ** 10n,
          maxPriorityFeePerGas: 10n ** 9n,
          maxFeePerBlobGas: 10n ** 9n,
          to: '0x000000000000000000000000000000000000b10b',
          blobsData: ['hello from basalt'],
        },
        { common },
      ).sign(key);

    const nonce = BigInt(await node.rpc<string>('eth_getTransactionCount', [DEV_ACCOUNTS[2].address, 'pending']));
    const tx = blobTx(nonce);
    // A wrapper whose blob was changed after signing: the proof no longer matches.
    const wrapper = tx.serializeNetworkWrapper();
    const tampered = wrapper.slice();
    tampered[tampered.length - 48 * 2 - 131072 + 100] ^= 1; // a byte inside the blob
    // The first blob transaction makes the decode threads load KZG's trusted setup (~20 s idle, more on
    // a loaded machine); a call that outlasts the 30 s HTTP timeout is answered 408 while the load goes on.
    const kzgDeadline = Date.now() + 150_000;
    let refusal: Error | undefined;
    while (!refusal) {
      const error = await node.rpc('eth_sendRawTransaction', [bytesToHex(tampered)]).then(
        () => new Error('the tampered blob was accepted'),
        (err: Error & { code?: number }) => err,
      );
      if (error.message !== 'Timeout expired' || Date.now() > kzgDeadline) refusal = error;
    }
    t.is(refusal.message, 'blobs failed kzg validation');

    const hash = await node.rpc<string>('eth_sendRawTransaction', [bytesToHex(wrapper)]);
    t.is(hash, bytesToHex(tx.hash()));
    let receipt: Record<string, string> | null = null;
    const deadline = Date.now() + 60_000;
    while (!receipt && Date.now() < deadline) {
      receipt = await node.rpc<Record<string, string> | null>('eth_getTransactionReceipt', [hash]);
      if (!receipt) await new Promise((r) => setTimeout(r, 250));
    }
    t.truthy(receipt, 'the blob transaction is mined');
    t.is(receipt!.status, '0x1');
    t.is(receipt!.type, '0x3');
    t.is(receipt!.blobGasUsed, '0x20000');
    t.truthy(receipt!.blobGasPrice);
    const block = await node.rpc<Record<string, string>>('eth_getBlockByNumber', [receipt!.blockNumber, false]);
    t.is(block.blobGasUsed, '0x20000');
    const mined = await node.rpc<Record<string, unknown>>('eth_getTransactionByHash', [hash]);
    t.deepEqual(mined.blobVersionedHashes, tx.blobVersionedHashes.map((h) => (typeof h === "string" ? h : bytesToHex(h))));
  } finally {
    await node.kill();
    removeDataPath(node.dataPath);
  }
});
