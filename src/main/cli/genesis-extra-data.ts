// The genesis extraData Besu's tools write for a list of validators (qbft-and-p2p.md §2.3, §9.2, §9.3):
// 32 zero bytes of vanity, the validators in the order given, no vote, round 0, no seals. QBFT's is the
// one Basalt runs; IBFT 2.0's (a null vote and a four-byte round) is written too, because `rlp encode`
// defaults to it and a genesis with an `ibft2` section gets it, as with Besu.

import { RLP } from '@ethereumjs/rlp';
import { genesisExtraData } from '../../shared/qbft/extra-data.js';

/** `rlp encode --type` values, in Besu's order (the first is its default). */
export const EXTRA_DATA_TYPES = ['IBFT_EXTRA_DATA', 'QBFT_EXTRA_DATA'] as const;
export type ExtraDataType = (typeof EXTRA_DATA_TYPES)[number];

const VANITY = new Uint8Array(32);

export function genesisExtraDataOf(type: ExtraDataType, validators: Uint8Array[]): Uint8Array {
  if (type === 'QBFT_EXTRA_DATA') return genesisExtraData(validators);
  return RLP.encode([VANITY, validators, new Uint8Array(0), new Uint8Array(4), []]);
}

const ADDRESS = /^(?:0x)?([0-9a-fA-F]{40})$/;

/** A validator address as Besu's tools take it: 40 hex digits, `0x` optional; undefined when it is not one. */
export function parseAddress(text: string): Uint8Array | undefined {
  const match = ADDRESS.exec(text);
  return match === null ? undefined : Uint8Array.from(Buffer.from(match[1]!, 'hex'));
}

export function toHex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes).toString('hex')}`;
}
