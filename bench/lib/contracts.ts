/**
 * The storeAndLog contract (test/helpers/contracts.ts) deployed on a bench node, for workloads that
 * read its state or logs.
 */
import { getCreateAddress, toBeHex, zeroPadValue } from 'ethers';
import { storeAndLogDeployCode } from '../../test/helpers/contracts.js';
import { DEV_ACCOUNTS } from '../../test/helpers/dev-accounts.js';
import { log } from './format.js';
import { RpcClient } from './http-client.js';
import { accountFromKey, signingCommon, signTx } from './signing.js';

const HOST = '127.0.0.1';

/** Deploys storeAndLog from a dev account, stores 42 in it, and returns its address once mined. */
export async function deployStoreAndLog(port: number): Promise<string> {
  const rpc = new RpcClient(HOST, port);
  try {
    const deployer = accountFromKey(DEV_ACCOUNTS[1].privateKey);
    const common = signingCommon(Number(await rpc.call<string>('eth_chainId')));
    const nonce = BigInt(await rpc.call<string>('eth_getTransactionCount', [deployer.address, 'latest']));
    const head = await rpc.call<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false]);
    const maxPriorityFeePerGas = 10n ** 9n;
    const maxFeePerGas = 2n * BigInt(head.baseFeePerGas ?? '0x0') + maxPriorityFeePerGas;
    const contract = getCreateAddress({ from: deployer.address, nonce }).toLowerCase();
    const deploy = signTx(common, deployer, { nonce, value: 0n, data: storeAndLogDeployCode(), gasLimit: 200_000n, maxFeePerGas, maxPriorityFeePerGas });
    const store = signTx(common, deployer, { nonce: nonce + 1n, to: contract, value: 0n, data: zeroPadValue(toBeHex(42), 32), gasLimit: 100_000n, maxFeePerGas, maxPriorityFeePerGas });
    await rpc.call('eth_sendRawTransaction', [deploy.raw]);
    await rpc.call('eth_sendRawTransaction', [store.raw]);
    const deadline = Date.now() + 30_000;
    while ((await rpc.call('eth_getTransactionReceipt', [store.hash])) === null) {
      if (Date.now() > deadline) throw new Error('the storeAndLog deployment was not mined within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    log(`storeAndLog deployed at ${contract}`);
    return contract;
  } finally {
    rpc.close();
  }
}
