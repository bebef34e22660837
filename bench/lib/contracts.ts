/**
 * Contracts of the benchmarks: the storeAndLog contract (test/helpers/contracts.ts) deployed on a bench
 * node, for workloads that read its state or logs, and the peer benchmarks' ERC-20-like token.
 */
import { Interface, getCreateAddress, toBeHex, zeroPadValue } from 'ethers';
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

/**
 * Creation code of the peer benchmarks' ERC-20-like token (`/work/shared/peer-bench/Token.sol`, the
 * `bytecode` of its `token.json`, solc 0.8.37): `balanceOf` mapping, `mint(to, value)` and
 * `transfer(to, value)`, each emitting one Transfer event. Copied here so the benchmark needs no
 * compiler and no file outside the project.
 */
export const TOKEN_DEPLOY_CODE =
  '0x6080604052348015600e575f5ffd5b506102a58061001c5f395ff3fe608060405234801561000f575f5ffd5b506004361061003f575f3560e01c806340c10f191461004357806370a0823114610058578063a9059cbb1461008a575b5f5ffd5b610056610051366004610208565b6100ad565b005b610077610066366004610230565b5f6020819052908152604090205481565b6040519081526020015b60405180910390f35b61009d610098366004610208565b61011d565b6040519015158152602001610081565b6001600160a01b0382165f90815260208190526040812080548392906100d4908490610250565b90915550506040518181526001600160a01b038316905f907fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef9060200160405180910390a35050565b335f908152602081905260408120548281101561016a5760405162461bcd60e51b815260206004820152600760248201526662616c616e636560c81b604482015260640160405180910390fd5b335f9081526020819052604080822085840390556001600160a01b03861682528120805485929061019c908490610250565b90915550506040518381526001600160a01b0385169033907fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef9060200160405180910390a360019150505b92915050565b80356001600160a01b0381168114610203575f5ffd5b919050565b5f5f60408385031215610219575f5ffd5b610222836101ed565b946020939093013593505050565b5f60208284031215610240575f5ffd5b610249826101ed565b9392505050565b808201808211156101e757634e487b7160e01b5f52601160045260245ffdfea2646970667358221220b8151910dea877620f73d02b97720a580e7d09a2a36e8ff8efff57cb21e2d79064736f6c63430008250033';

/** The token's calls the benchmarks make. */
export const tokenInterface = new Interface([
  'function mint(address to, uint256 value)',
  'function balanceOf(address owner) view returns (uint256)',
  'function transfer(address to, uint256 value) returns (bool)',
]);
