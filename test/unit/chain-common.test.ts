// The chain's Common holds ethereumjs' block parameters from construction, so that constructing a
// block header (which copies the Common) does not merge them again and rebuild the parameter cache:
// that was a third of what an empty QBFT block allocated. The copies still read every parameter.
import test from 'ava';
import { createBlockHeader } from '@ethereumjs/block';
import { Common } from '@ethereumjs/common';
import { paramsVM } from '@ethereumjs/vm';
import { createChainCommon } from '../../src/shared/ethereum/common.js';
import { loadDevNetwork, parseGenesisJson } from '../../src/shared/ethereum/genesis.js';

/** Counts the rebuilds of any Common's parameter cache while `run` runs. */
function countCacheBuilds<T>(run: () => T): { result: T; builds: number } {
  const proto = Common.prototype as unknown as { _buildParamsCache(): void };
  const original = proto._buildParamsCache;
  let builds = 0;
  proto._buildParamsCache = function (this: unknown) {
    builds++;
    original.call(this);
  };
  try {
    return { result: run(), builds };
  } finally {
    proto._buildParamsCache = original;
  }
}

const genesis = parseGenesisJson(JSON.stringify(loadDevNetwork().genesisJson));

test('a header made with the chain Common does not rebuild the parameter cache, and reads the block parameters', (t) => {
  const common = createChainCommon(genesis);
  const { result: header, builds } = countCacheBuilds(() =>
    createBlockHeader({ number: 1n, timestamp: genesis.header.timestamp + 1n, gasLimit: 30_000_000n, baseFeePerGas: 7n }, { common, setHardfork: true, skipConsensusFormatValidation: true }),
  );
  t.is(builds, 0);
  t.is(header.common.param('elasticityMultiplier'), 2n);
  t.is(header.common.param('baseFeeMaxChangeDenominator'), 8n);
  t.is(header.common.param('maxRlpBlockSize'), 10_485_760n - 2_097_152n, "Besu's EIP-7934 limit, set by Basalt");
  t.is(header.calcNextBaseFee(), 7n - 7n / 8n, 'an empty block lowers the base fee by 1/8');
});

test("other parameter sets (the VM's) still merge into a copy of the chain Common", (t) => {
  const copy = createChainCommon(genesis).copy();
  const { builds } = countCacheBuilds(() => copy.updateParams(paramsVM));
  t.is(builds, 1);
  t.is(copy.param('historyServeWindow'), 8191n, 'EIP-2935, from the VM set');
  t.is(copy.param('elasticityMultiplier'), 2n);
});
