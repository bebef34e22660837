/**
 * Fast pre-signing of EIP-1559 transactions for the benchmarks: @ethereumjs/tx builds and encodes
 * them with one cached Common, and the native libsecp256k1 binding signs (pure-JS signing is
 * ~20× slower and would dominate setup time).
 */
import { Common, Hardfork, Mainnet } from '@ethereumjs/common';
import { createFeeMarket1559Tx, paramsTx } from '@ethereumjs/tx';
import { bytesToHex, hexToBytes, privateToAddress } from '@ethereumjs/util';
import { randomBytes } from 'node:crypto';
import secp256k1 from 'secp256k1';

/**
 * ethereumjs copies the Common for every transaction and merges the transaction parameter set into
 * the copy, about half the construction time; this one has them merged once (as src/chain/tx-common.ts
 * does for the node).
 */
class PremergedCommon extends Common {
  override updateParams(): void {}
}

/** A Common for `chainId` that signs natively; built once and shared by every transaction. */
export function signingCommon(chainId: number): Common {
  return new PremergedCommon({
    chain: { ...Mainnet, chainId },
    hardfork: Hardfork.Cancun,
    params: paramsTx,
    customCrypto: {
      // ethereumjs expects noble's "recovered" layout: recovery id, then r and s.
      ecsign: (messageHash: Uint8Array, privateKey: Uint8Array): Uint8Array<ArrayBuffer> => {
        const { signature, recid } = secp256k1.ecdsaSign(messageHash, privateKey);
        const recovered = new Uint8Array(65);
        recovered[0] = recid;
        recovered.set(signature, 1);
        return recovered;
      },
    },
  });
}

export interface Account {
  privateKey: Uint8Array;
  /** Lower-case 0x address. */
  address: string;
}

export function accountFromKey(privateKeyHex: string): Account {
  const privateKey = hexToBytes(privateKeyHex as `0x${string}`);
  return { privateKey, address: bytesToHex(privateToAddress(privateKey)) };
}

export function randomAccount(): Account {
  for (;;) {
    const privateKey = new Uint8Array(randomBytes(32));
    if (secp256k1.privateKeyVerify(privateKey)) return { privateKey, address: bytesToHex(privateToAddress(privateKey)) };
  }
}

export interface UnsignedFields {
  nonce: bigint;
  to?: string;
  value: bigint;
  data?: string;
  gasLimit: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export interface SignedTx {
  /** 0x-prefixed raw bytes for eth_sendRawTransaction. */
  raw: string;
  /** Lower-case 0x transaction hash. */
  hash: string;
}

export function signTx(common: Common, from: Account, fields: UnsignedFields): SignedTx {
  const tx = createFeeMarket1559Tx(
    {
      nonce: fields.nonce,
      to: fields.to as `0x${string}` | undefined,
      value: fields.value,
      data: (fields.data ?? '0x') as `0x${string}`,
      gasLimit: fields.gasLimit,
      maxFeePerGas: fields.maxFeePerGas,
      maxPriorityFeePerGas: fields.maxPriorityFeePerGas,
      chainId: common.chainId(),
    },
    { common },
  ).sign(from.privateKey);
  return { raw: bytesToHex(tx.serialize()), hash: bytesToHex(tx.hash()) };
}
