/**
 * Contracts deployed on a bench node, for workloads that read their state or logs: storeAndLog
 * (test/helpers/contracts.ts) and the peer benchmarks' ERC-20 token.
 */
import { Interface, getCreateAddress, toBeHex, zeroPadValue } from 'ethers';
import { storeAndLogDeployCode, tokenDeployCode, tokenMintCallData } from '../../test/helpers/contracts.js';
import { DEV_ACCOUNTS } from '../../test/helpers/dev-accounts.js';
import { log } from './format.js';
import { RpcClient } from './http-client.js';
import { accountFromKey, signingCommon, signTx } from './signing.js';

const HOST = '127.0.0.1';

/** Deploys storeAndLog from a dev account, stores 42 in it, and returns its address once mined. */
export async function deployStoreAndLog(port: number): Promise<string> {
  const contract = await deployAndCall(port, storeAndLogDeployCode(), (address) => ({ to: address, data: zeroPadValue(toBeHex(42), 32), gasLimit: 100_000n }));
  log(`storeAndLog deployed at ${contract}`);
  return contract;
}

/** Deploys the ERC-20 token from a dev account, mints 10^24 to `holder`, and returns its address once mined. */
export async function deployToken(port: number, holder: string): Promise<string> {
  const contract = await deployAndCall(port, tokenDeployCode(), (address) => ({ to: address, data: tokenMintCallData(holder, 10n ** 24n), gasLimit: 100_000n }));
  log(`ERC-20 token deployed at ${contract}`);
  return contract;
}

/** Sends a creation from dev account 1 and a call to the new contract; resolves with its address once the call is mined. */
async function deployAndCall(port: number, creationCode: string, call: (address: string) => { to: string; data: string; gasLimit: bigint }): Promise<string> {
  const rpc = new RpcClient(HOST, port);
  try {
    const deployer = accountFromKey(DEV_ACCOUNTS[1].privateKey);
    const common = signingCommon(Number(await rpc.call<string>('eth_chainId')));
    const nonce = BigInt(await rpc.call<string>('eth_getTransactionCount', [deployer.address, 'pending']));
    const head = await rpc.call<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false]);
    const maxPriorityFeePerGas = 10n ** 9n;
    const maxFeePerGas = 2n * BigInt(head.baseFeePerGas ?? '0x0') + maxPriorityFeePerGas;
    const contract = getCreateAddress({ from: deployer.address, nonce }).toLowerCase();
    const deploy = signTx(common, deployer, { nonce, value: 0n, data: creationCode, gasLimit: 1_000_000n, maxFeePerGas, maxPriorityFeePerGas });
    const followUp = signTx(common, deployer, { nonce: nonce + 1n, value: 0n, maxFeePerGas, maxPriorityFeePerGas, ...call(contract) });
    await rpc.call('eth_sendRawTransaction', [deploy.raw]);
    await rpc.call('eth_sendRawTransaction', [followUp.raw]);
    const deadline = Date.now() + 30_000;
    while ((await rpc.call('eth_getTransactionReceipt', [followUp.hash])) === null) {
      if (Date.now() > deadline) throw new Error(`the deployment of ${contract} was not mined within 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return contract;
  } finally {
    rpc.close();
  }
}

/** The token's creation code, for workloads that sign its deployment themselves. */
export const TOKEN_DEPLOY_CODE = tokenDeployCode();

/** The token's calls the benchmarks make. */
export const tokenInterface = new Interface([
  'function mint(address to, uint256 value)',
  'function balanceOf(address owner) view returns (uint256)',
  'function transfer(address to, uint256 value) returns (bool)',
]);
