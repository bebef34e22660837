/**
 * A blob (type 3) transaction on the dev network (Osaka): admitted in EIP-7594's network wrapper
 * (version 1, a KZG proof for each of a blob's 128 cells) with its proofs checked, mined with its blob
 * gas counted, served with the blob fields. The version 0 wrapper of before Osaka (one proof per blob)
 * is refused, as Besu refuses it from Osaka on, and so is a blob that does not match its proofs.
 */
import test from 'ava';
import { Mainnet, createCustomCommon } from '@ethereumjs/common';
import { RLP } from '@ethereumjs/rlp';
import { createBlob4844Tx } from '@ethereumjs/tx';
import { bytesToHex, getBlobs, hexToBytes, type KZG } from '@ethereumjs/util';
import { HELLO_BLOB_CELL_PROOFS, HELLO_BLOB_COMMITMENT, HELLO_BLOB_PROOF, HELLO_BLOB_TEXT } from '../helpers/blob-vectors.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { removeDataPath, startNode } from '../helpers/node-process.js';
import type { NodeProcess } from '../helpers/node-process.js';

/**
 * The error a raw transaction is refused with (undefined when accepted). A blob transaction makes a
 * decode thread load KZG's trusted setup first (~20 s idle, more on a loaded machine, once per
 * thread); a call that outlasts the 30 s HTTP timeout is answered 408 while the load goes on.
 */
async function refusal(node: NodeProcess, raw: Uint8Array): Promise<(Error & { code?: number }) | undefined> {
  const deadline = Date.now() + 150_000;
  for (;;) {
    const error = await node.rpc('eth_sendRawTransaction', [bytesToHex(raw)]).then(
      () => undefined,
      (err: Error & { code?: number }) => err,
    );
    if (error?.message !== 'Timeout expired' || Date.now() > deadline) return error;
  }
}

/**
 * ethereumjs wants a KZG on the Common of a blob transaction even when the blobs, commitments and
 * proofs are all given (precomputed in blob-vectors.ts); this one is never asked to compute.
 */
const PRECOMPUTED_ONLY = new Proxy({} as KZG, {
  get: (_target, method) => () => {
    throw new Error(`KZG ${String(method)}: the test uses precomputed vectors`);
  },
});

test('an EIP-7594 blob transaction is admitted, mined and served; a version 0 wrapper and a blob that does not match its proofs are refused', async (t) => {
  t.timeout(300_000);
  const node = await startNode();
  try {
    const common = createCustomCommon({ chainId: 1337 }, Mainnet, { hardfork: 'osaka', customCrypto: { kzg: PRECOMPUTED_ONLY } });
    const key = hexToBytes(DEV_ACCOUNTS[2].privateKey as `0x${string}`);
    const nonce = BigInt(await node.rpc<string>('eth_getTransactionCount', [DEV_ACCOUNTS[2].address, 'pending']));
    const tx = createBlob4844Tx(
      {
        chainId: 1337n,
        nonce,
        gasLimit: 21_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 10n ** 9n,
        maxFeePerBlobGas: 10n ** 9n,
        to: '0x000000000000000000000000000000000000b10b',
        blobs: getBlobs(HELLO_BLOB_TEXT),
        kzgCommitments: [HELLO_BLOB_COMMITMENT],
        kzgProofs: [...HELLO_BLOB_CELL_PROOFS],
      },
      { common },
    ).sign(key);
    t.is(tx.networkWrapperVersion, 1);
    const wrapper = tx.serializeNetworkWrapper();
    t.is(tx.kzgProofs!.length, 128, 'a proof per cell');

    // The same signed transaction in the pre-Osaka wrapper: [tx, blobs, commitments, one proof per blob].
    const blob = tx.blobs![0]!;
    const commitment = tx.kzgCommitments![0]!;
    const v0 = new Uint8Array([3, ...RLP.encode([tx.raw(), [hexToBytes(blob)], [hexToBytes(commitment)], [hexToBytes(HELLO_BLOB_PROOF)]])]);
    t.is((await refusal(node, v0))?.message, 'blobs failed kzg validation', 'version 0 wrapper');

    // The version 1 wrapper with a byte of its blob changed after signing: the cell proofs no longer hold.
    const tampered = wrapper.slice();
    tampered[tampered.length - 48 * 128 - 48 - 131072 + 100] ^= 1;
    t.is((await refusal(node, tampered))?.message, 'blobs failed kzg validation', 'tampered blob');

    t.is(await refusal(node, wrapper), undefined, 'the version 1 wrapper is admitted');
    const hash = bytesToHex(tx.hash());
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
    t.deepEqual(mined.blobVersionedHashes, tx.blobVersionedHashes);
  } finally {
    await node.kill();
    removeDataPath(node.dataPath);
  }
});
