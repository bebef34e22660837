// A pooled transaction as a bulk-reading transport (GraphQL's `pending`) reads it from the pool actor:
// a blob transaction's versioned hashes come from its decoding, which keeps them.
import test from 'ava';
import { createBlob4844Tx } from '@ethereumjs/tx';
import { RLP } from '@ethereumjs/rlp';
import { getBlobs, hexToBytes } from '@ethereumjs/util';
import { sha256 } from '@noble/hashes/sha2.js';
import { parseGenesisJson } from '../../src/shared/ethereum/genesis.js';
import { txCommonFor } from '../../src/shared/ethereum/tx-common.js';
import { decodeRawTransaction } from '../../src/tasks/transaction-decode.js';
import type { BlobVerifier } from '../../src/tasks/transaction-decode.js';
import { txRulesFor } from '../../src/txpool/tx-rules.js';
import { DEV_ACCOUNTS } from '../helpers/dev-accounts.js';
import { HELLO_BLOB_COMMITMENT, HELLO_BLOB_PROOF, HELLO_BLOB_TEXT } from '../helpers/blob-vectors.js';
import { devNetwork } from '../helpers/dev-chain.js';
import { inlineDecode, poolActor, poolHead } from '../helpers/pool-actor.js';

/**
 * KZG as far as this test needs it: the precomputed proof of the test blob is accepted (the node's
 * real KZG checks these vectors in test/e2e/node-blob.test.ts), anything else is not.
 */
const kzg: BlobVerifier = {
  verifyBlobProofBatch: (_blobs, commitments, proofs) => commitments.join() === HELLO_BLOB_COMMITMENT && proofs.join() === HELLO_BLOB_PROOF,
  computeCells: () => [],
  verifyCellKzgProofBatch: () => false,
};

test("a pooled blob transaction's record carries its versioned hashes and blob fee", async (t) => {
  const commitment = hexToBytes(HELLO_BLOB_COMMITMENT);
  const versionedHash = sha256(commitment);
  versionedHash[0] = 0x01;
  const tx = createBlob4844Tx(
    { chainId: 1337n, nonce: 0n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 2n, maxFeePerBlobGas: 5n, to: '0x000000000000000000000000000000000000b10b', blobVersionedHashes: [versionedHash] },
    { common: txCommonFor(1337n, 'cancun') },
  ).sign(hexToBytes(DEV_ACCOUNTS[0].privateKey as `0x${string}`));
  // The network wrapper of Cancun (version 0): the transaction, then its blobs, commitments and proofs.
  const wrapped = Uint8Array.from(Buffer.concat([Uint8Array.of(3), RLP.encode([tx.raw(), [hexToBytes(getBlobs(HELLO_BLOB_TEXT)[0]!)], [commitment], [hexToBytes(HELLO_BLOB_PROOF)]])]));
  t.deepEqual(decodeRawTransaction(wrapped, txRulesFor(1337n, 'cancun'), kzg).blobVersionedHashes, [versionedHash]);

  const pool = poolActor(parseGenesisJson(JSON.stringify(devNetwork.genesisJson)), poolHead(1n, 'cancun'), inlineDecode(kzg));
  t.deepEqual(await pool.p2p.peerTransactions({ raws: [wrapped], hashes: [tx.hash()] }), { added: 1 });
  const { count, transactions } = await pool.transportHandlers(0).pending(null);
  t.is(count, 1);
  t.deepEqual(transactions[0]!.blobVersionedHashes, [versionedHash]);
  t.deepEqual(transactions[0]!.raw, tx.serialize(), 'the canonical encoding, without the blobs');
  t.is(transactions[0]!.maxFeePerBlobGas, 5n);
  t.is(transactions[0]!.type, 3);
});
