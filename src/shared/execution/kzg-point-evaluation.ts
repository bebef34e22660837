/**
 * EIP-4844's point-evaluation precompile (0x0a) with the KZG check done elsewhere.
 *
 * ethereumjs' own 0x0a calls its KZG backend synchronously, so it would need kzg-wasm in the chain
 * thread, whose trusted setup takes ~20 s to load and would stall every block and read meanwhile.
 * The EVM awaits precompile results, so here 0x0a checks gas, length and versioned hash in place and
 * hands the pairing check to an asynchronous verifier (a worker thread: see kzg-verifier.ts).
 *
 * The verifier's answer is a pure function of its input, so building, importing and eth_call agree.
 * A verifier that cannot answer (its thread died, kzg-wasm did not load) rejects, and the call fails
 * as an error rather than as an invalid proof: a node must not disagree with the chain over a crash.
 */
import type { Common } from '@ethereumjs/common';
import { EVMError } from '@ethereumjs/evm';
import type { EVMInterface, ExecResult, PrecompileFunc, PrecompileInput } from '@ethereumjs/evm';
import { bigIntToBytes, concatBytes, equalsBytes, setLengthLeft } from '@ethereumjs/util';
import { sha256 } from '@noble/hashes/sha2.js';

/** The precompile's key in the EVM's precompile map (address without 0x). */
export const POINT_EVALUATION_ADDRESS = '000000000000000000000000000000000000000a';

/** BLS12-381 scalar field modulus, the second word of every successful result. */
export const BLS_MODULUS = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001n;

const INPUT_LENGTH = 192;

/** The four byte strings of a point evaluation: does `proof` open `commitment` to `y` at `z`? */
export interface PointEvaluationInput {
  /** 48-byte compressed G1 point. */
  commitment: Uint8Array;
  /** 32-byte big-endian field element. */
  z: Uint8Array;
  /** 32-byte big-endian field element. */
  y: Uint8Array;
  /** 48-byte compressed G1 point. */
  proof: Uint8Array;
}

/**
 * Answers `verify_kzg_proof`: false for a wrong proof and for malformed inputs (points not on the
 * curve, non-canonical field elements); rejects only when it cannot answer at all.
 */
export type PointEvaluationVerifier = (input: PointEvaluationInput) => Promise<boolean>;

/** EIP-4844's `kzg_to_versioned_hash`: the version byte followed by sha256(commitment) without its first byte. */
export function kzgVersionedHash(commitment: Uint8Array, version: number): Uint8Array {
  const hash = sha256(commitment);
  hash[0] = version;
  return hash;
}

function failure(message: EVMError['error'], gasLimit: bigint): ExecResult {
  // A failed precompile call consumes all the gas it was given.
  return { returnValue: new Uint8Array(0), executionGasUsed: gasLimit, exceptionError: new EVMError(message) };
}

/** The 0x0a precompile over `verify`. Gas, input checks and result follow EIP-4844. */
export function pointEvaluationPrecompile(verify: PointEvaluationVerifier): PrecompileFunc {
  return async (input: PrecompileInput): Promise<ExecResult> => {
    const { common, data, gasLimit } = input;
    const gas = common.param('kzgPointEvaluationPrecompileGas');
    if (gasLimit < gas) return failure(EVMError.errorMessages.OUT_OF_GAS, gasLimit);
    if (data.length !== INPUT_LENGTH) return failure(EVMError.errorMessages.INVALID_INPUT_LENGTH, gasLimit);
    const versionedHash = data.subarray(0, 32);
    const evaluation: PointEvaluationInput = {
      z: data.slice(32, 64),
      y: data.slice(64, 96),
      commitment: data.slice(96, 144),
      proof: data.slice(144, 192),
    };
    const version = Number(common.param('blobCommitmentVersionKzg'));
    if (!equalsBytes(kzgVersionedHash(evaluation.commitment, version), versionedHash)) {
      return failure(EVMError.errorMessages.INVALID_COMMITMENT, gasLimit);
    }
    if (!(await verify(evaluation))) return failure(EVMError.errorMessages.INVALID_PROOF, gasLimit);
    return {
      executionGasUsed: gas,
      returnValue: concatBytes(
        setLengthLeft(bigIntToBytes(common.param('fieldElementsPerBlob')), 32),
        setLengthLeft(bigIntToBytes(BLS_MODULUS), 32),
      ),
    };
  };
}

/**
 * Puts the 0x0a precompile over `verify` into `evm` for every hardfork where EIP-4844 is active, and
 * only there (ethereumjs' `customPrecompiles` would make 0x0a a precompile from Frontier on: warm,
 * callable). The EVM rebuilds its precompile map on each hardfork change, in a listener registered
 * when it was created; this listener, registered later, runs after it and replaces ethereumjs' 0x0a.
 */
export function installPointEvaluation(evm: Pick<EVMInterface, 'precompiles'> & { common: Common }, verify: PointEvaluationVerifier): void {
  const precompile = pointEvaluationPrecompile(verify);
  const apply = () => {
    if (evm.common.isActivatedEIP(4844)) evm.precompiles.set(POINT_EVALUATION_ADDRESS, precompile);
  };
  evm.common.events.on('hardforkChanged', apply);
  apply();
}
