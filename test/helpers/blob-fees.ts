/**
 * The blob market computed independently of the node (EIP-4844, EIP-7918, EIP-7892), for tests that
 * check the blob gas, excess blob gas and blob base fee a chain serves, block by block.
 */

export const GAS_PER_BLOB = 131072n;

/** One fork's blob parameters (a genesis `blobSchedule` entry). */
export interface BlobParams {
  readonly target: bigint;
  readonly max: bigint;
  readonly fraction: bigint;
}

/** A `blobSchedule` entry as the genesis writes it, as bigints. */
export function blobParamsOf(entry: { target: number; max: number; baseFeeUpdateFraction: number }): BlobParams {
  return { target: BigInt(entry.target), max: BigInt(entry.max), fraction: BigInt(entry.baseFeeUpdateFraction) };
}

/** EIP-4844's fake_exponential(factor, numerator, denominator). */
export function fakeExponential(factor: bigint, numerator: bigint, denominator: bigint): bigint {
  let i = 1n;
  let output = 0n;
  let accumulator = factor * denominator;
  while (accumulator > 0n) {
    output += accumulator;
    accumulator = (accumulator * numerator) / (denominator * i);
    i++;
  }
  return output / denominator;
}

export function blobBaseFee(excessBlobGas: bigint, params: BlobParams): bigint {
  return fakeExponential(1n, excessBlobGas, params.fraction);
}

export interface BlobParent {
  readonly excessBlobGas: bigint;
  readonly blobGasUsed: bigint;
  readonly baseFeePerGas: bigint;
}

/**
 * The child's excess blob gas, all in the child's blob parameters (`child`); `osakaRules` for a child
 * from Osaka on, where EIP-7918's reserve price applies (BPO forks included).
 */
export function nextExcessBlobGas(parent: BlobParent, child: BlobParams, osakaRules: boolean): bigint {
  const targetGas = child.target * GAS_PER_BLOB;
  if (parent.excessBlobGas + parent.blobGasUsed < targetGas) return 0n;
  if (osakaRules && 8192n * parent.baseFeePerGas > GAS_PER_BLOB * blobBaseFee(parent.excessBlobGas, child)) {
    return parent.excessBlobGas + (parent.blobGasUsed * (child.max - child.target)) / child.max;
  }
  return parent.excessBlobGas + parent.blobGasUsed - targetGas;
}
