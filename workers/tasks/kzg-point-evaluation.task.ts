/**
 * Piscina task: EIP-4844 `verify_kzg_proof` for the point-evaluation precompile (see
 * kzg-point-evaluation.ts). kzg-wasm and its trusted setup load on the first task (~20 s) and stay
 * loaded for the life of the thread.
 */
// First, before @noble/hashes is evaluated in this thread (see hex-builtins.ts).
import '../../src/shared/util/hex-builtins.js';
import { bytesToHex } from '@ethereumjs/util';
import type { PointEvaluationInput } from '../../src/shared/execution/kzg-point-evaluation.js';
import { nameThisThread } from '../../src/shared/util/thread-name.js';

nameThisThread('kzg');

type KzgLibrary = Awaited<ReturnType<typeof import('kzg-wasm').loadKZG>>;

let library: Promise<KzgLibrary> | undefined;

export default async function verifyPointEvaluation({ commitment, z, y, proof }: PointEvaluationInput): Promise<boolean> {
  library ??= import('kzg-wasm').then(({ loadKZG }) => loadKZG());
  const kzg = await library;
  // c-kzg answers false (not an error) for points off the curve and non-canonical field elements.
  return kzg.verifyKZGProof(bytesToHex(commitment), bytesToHex(z), bytesToHex(y), bytesToHex(proof));
}
