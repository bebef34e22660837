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
