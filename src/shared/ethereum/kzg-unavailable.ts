import type { KZG } from '@ethereumjs/util';

/**
 * The KZG "backend" of a node that ships no KZG library.
 *
 * ethereumjs refuses to even construct a blob transaction unless its Common has a KZG backend, yet
 * decoding, hashing, importing and serving a block's blob transactions never touch KZG: a block
 * carries only versioned hashes, and the blobs with their proofs travel (and are checked) elsewhere.
 * So the chain's Common carries this object, which fails loudly if anything does call it. The two
 * places that would are the pool's check of a blob network wrapper (the pool checks those itself with
 * kzg-wasm, see txpool/decode-task.ts) and ethereumjs' point-evaluation precompile (0x0a), which the
 * chain replaces with one that verifies in a worker thread (kzg-point-evaluation.ts).
 */
function unavailable(): never {
  throw new Error('KZG is not available in this node');
}

export const KZG_UNAVAILABLE: KZG = {
  blobToKzgCommitment: unavailable,
  computeBlobProof: unavailable,
  verifyProof: unavailable,
  verifyBlobProofBatch: unavailable,
  computeCells: unavailable,
  computeCellsAndProofs: unavailable,
  recoverCellsAndProofs: unavailable,
  verifyCellKzgProofBatch: unavailable,
};
