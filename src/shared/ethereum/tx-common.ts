import { Common, Mainnet } from '@ethereumjs/common';
import { paramsTx } from '@ethereumjs/tx';
import { KZG_UNAVAILABLE } from './kzg-unavailable.js';
import { nativeEcrecover } from './native-ecrecover.js';
import { keccak256 } from './keccak.js';

/**
 * A Common for constructing transactions (pool decoding, block building, decoding blocks): chain id,
 * fork rules and native sender recovery only.
 *
 * ethereumjs copies the Common on every transaction and merges the tx parameter set into the copy
 * (JSON round trips plus a parameter-cache rebuild): about half of the construction time. This Common
 * is created with those parameters already merged, and its copies skip the merge.
 */
class TxParamsCommon extends Common {
  override updateParams(): void {
    // Parameters were merged once at construction; see the class comment.
  }
}

const commonCache = new Map<string, TxParamsCommon>();

/**
 * The blob-parameter-only forks change no transaction rule (their blob limits are block rules), and
 * ethereumjs' mainnet definition stops at bpo2: transactions take Osaka's rules under them.
 */
function txHardfork(hardfork: string): string {
  return /^bpo[1-5]$/.test(hardfork) ? 'osaka' : hardfork;
}

export function txCommonFor(chainId: bigint, chainHardfork: string): TxParamsCommon {
  const hardfork = txHardfork(chainHardfork);
  const key = `${chainId}:${hardfork}`;
  let common = commonCache.get(key);
  if (common === undefined) {
    if (chainId > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`chain id ${chainId} is too large`);
    common = new TxParamsCommon({
      chain: { ...Mainnet, chainId: Number(chainId) },
      hardfork,
      params: paramsTx,
      // Constructing a blob transaction requires a KZG backend even though it is never called then.
      customCrypto: { ecrecover: nativeEcrecover, keccak256, kzg: KZG_UNAVAILABLE },
    });
    commonCache.set(key, common);
  }
  return common;
}
