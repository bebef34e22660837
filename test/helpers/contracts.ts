/**
 * A tiny contract written directly in EVM bytecode, so tests need no compiler:
 * - called with a 32-byte word: stores it in slot 0 and emits `Stored(uint256)` with it as data;
 * - called with no data: returns slot 0.
 */
import { id } from 'ethers';

export const STORED_EVENT_TOPIC = id('Stored(uint256)');
export const STORE_AND_LOG_ABI = ['event Stored(uint256 value)'];

function storeAndLogRuntime(): string {
  const topic = STORED_EVENT_TOPIC.slice(2);
  return (
    '36' + // CALLDATASIZE
    '600f' + // PUSH1 0x0f (the store path)
    '57' + // JUMPI
    '600054' + // SLOAD(0)
    '600052' + // MSTORE(0)
    '60206000f3' + // RETURN(0, 32)
    '5b' + // JUMPDEST (0x0f)
    '600035' + // CALLDATALOAD(0)
    '80600055' + // DUP1, SSTORE(0)
    '600052' + // MSTORE(0)
    '7f' + topic + // PUSH32 topic
    '60206000a1' + // LOG1(0, 32, topic)
    '00' // STOP
  );
}

/** Creation code that returns the runtime above. */
export function storeAndLogDeployCode(): string {
  const runtime = storeAndLogRuntime();
  const length = (runtime.length / 2).toString(16).padStart(2, '0');
  // PUSH1 len, PUSH1 12 (runtime offset), PUSH1 0, CODECOPY, PUSH1 len, PUSH1 0, RETURN
  return `0x60${length}600c60003960${length}6000f3${runtime}`;
}

/** Runtime that always reverts with `Error("nope")`. */
export function revertingDeployCode(): string {
  // mstore the ABI-encoded Error(string) at 0 and revert(0, 100)
  const selector = '08c379a0';
  const payload =
    selector +
    '0000000000000000000000000000000000000000000000000000000000000020' +
    '0000000000000000000000000000000000000000000000000000000000000004' +
    '6e6f706500000000000000000000000000000000000000000000000000000000';
  // CODECOPY(0, 13, 100): the payload sits right after these 13 bytes of code; then REVERT(0, 100).
  const runtime = '6064600d600039' + '60646000fd' + '00' + payload;
  const length = (runtime.length / 2).toString(16).padStart(2, '0');
  return `0x60${length}600c60003960${length}6000f3${runtime}`;
}

export const MARKED_EVENT_TOPIC = id('Marked(uint256)');
export const MARKED_ABI = ['event Marked(uint256 indexed value)'];

/** Called with a 32-byte word: emits `Marked(uint256 indexed value)` with the word as topic 1, no data. */
export function markedDeployCode(): string {
  const runtime =
    '600035' + // CALLDATALOAD(0)
    '7f' + MARKED_EVENT_TOPIC.slice(2) + // PUSH32 topic
    '60006000' + // size 0, offset 0
    'a2' + // LOG2(0, 0, topic, value)
    '00'; // STOP
  const length = (runtime.length / 2).toString(16).padStart(2, '0');
  return `0x60${length}600c60003960${length}6000f3${runtime}`;
}

/** The ABI of `storageContract`, as clients (viem, web3.js, ethers) take it. */
export const STORAGE_ABI = [
  { type: 'function', name: 'set', stateMutability: 'nonpayable', inputs: [{ name: 'value', type: 'uint256' }], outputs: [] },
  { type: 'function', name: 'get', stateMutability: 'view', inputs: [], outputs: [{ name: '', type: 'uint256' }] },
  {
    type: 'event',
    name: 'Stored',
    anonymous: false,
    inputs: [
      { name: 'by', type: 'address', indexed: true },
      { name: 'value', type: 'uint256', indexed: false },
    ],
  },
] as const;

/**
 * Creation code of a contract with a Solidity ABI, in EVM bytecode: `set(uint256)` stores the value
 * and emits `Stored(address indexed by, uint256 value)` with the caller, `get()` returns it; any other
 * call reverts. What a client's deploy / write / read / event flow needs.
 */
export function storageContractDeployCode(): string {
  const selector = (signature: string) => id(signature).slice(2, 10);
  const push1 = (byte: number) => `60${byte.toString(16).padStart(2, '0')}`;
  const dispatchTo = (signature: string, label: number) => `80 63${selector(signature)} 14 ${push1(label)} 57`; // DUP1, PUSH4, EQ, JUMPI
  const bytes = (code: string) => code.replace(/ /g, '').length / 2;
  const head = '600035 60e0 1c'; // selector = CALLDATALOAD(0) >> 224
  const fail = '6000 6000 fd'; // REVERT(0, 0)
  const store =
    '5b 600435 80 600055 600052' + // JUMPDEST; value = CALLDATALOAD(4); SSTORE(0, value); MSTORE(0, value)
    ` 33 7f${id('Stored(address,uint256)').slice(2)} 6020 6000 a2 00`; // LOG2(0, 32, topic, CALLER); STOP
  const load = '5b 600054 600052 6020 6000 f3'; // JUMPDEST; MSTORE(0, SLOAD(0)); RETURN(0, 32)
  const storeAt = bytes(head) + 2 * bytes(dispatchTo('set(uint256)', 0)) + bytes(fail);
  const loadAt = storeAt + bytes(store);
  const runtime = [head, dispatchTo('set(uint256)', storeAt), dispatchTo('get()', loadAt), fail, store, load].join('').replace(/ /g, '');
  const length = (runtime.length / 2).toString(16).padStart(2, '0');
  return `0x60${length}600c60003960${length}6000f3${runtime}`;
}

/**
 * The peer benchmarks' minimal ERC-20 (`balanceOf`, `mint`, `transfer`; Token.sol, solc 0.8.37):
 * creation code copied from /work/shared/peer-bench/token.json, so that eth_call is measured and
 * tested on the same `balanceOf` as other nodes were benchmarked with.
 */
export function tokenDeployCode(): string {
  return (
    '0x6080604052348015600e575f5ffd5b506102a58061001c5f395ff3fe608060405234801561000f575f5ffd5b506004361061003f575f3560e01c806340c10f191461004357806370a0823114610058578063a9059cbb1461008a575b5f5ffd5b610056610051366004610208565b6100ad565b005b610077610066366004610230565b5f6020819052908152604090205481565b6040519081526020015b60405180910390f35b61009d610098366004610208565b61011d565b6040519015158152602001610081565b6001600160a01b0382165f90815260208190526040812080548392906100d4908490610250565b90915550506040518181526001600160a01b038316905f907fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef9060200160405180910390a35050565b335f908152602081905260408120548281101561016a5760405162461bcd60e51b815260206004820152600760248201526662616c616e636560c81b604482015260640160405180910390fd5b335f9081526020819052604080822085840390556001600160a01b03861682528120805485929061019c908490610250565b90915550506040518381526001600160a01b0385169033907fddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef9060200160405180910390a360019150505b92915050565b80356001600160a01b0381168114610203575f5ffd5b919050565b5f5f60408385031215610219575f5ffd5b610222836101ed565b946020939093013593505050565b5f60208284031215610240575f5ffd5b610249826101ed565b9392505050565b808201808211156101e757634e487b7160e01b5f52601160045260245ffdfea2646970667358221220b8151910dea877620f73d02b97720a580e7d09a2a36e8ff8efff57cb21e2d79064736f6c63430008250033'
  );
}

/** `balanceOf(holder)` call data for the token. */
export function tokenBalanceOfCallData(holder: string): string {
  return '0x70a08231' + holder.slice(2).toLowerCase().padStart(64, '0');
}

/** `mint(to, amount)` call data for the token. */
export function tokenMintCallData(to: string, amount: bigint): string {
  return '0x40c10f19' + to.slice(2).toLowerCase().padStart(64, '0') + amount.toString(16).padStart(64, '0');
}
