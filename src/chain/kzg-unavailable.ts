import type { KZG } from '@ethereumjs/util';

/**
 * The KZG "backend" of a node that ships no KZG library.
 *
 * ethereumjs refuses to even construct a blob transaction unless its Common has a KZG backend, yet
 * decoding, hashing, importing and serving a block's blob transactions never touch KZG: a block
 * carries only versioned hashes, and the blobs with their proofs travel (and are checked) elsewhere.
 * So the chain's Common carries this object, which fails loudly if anything does call it. The two
 * places that would are the pool's check of a blob network wrapper (refused before it gets here, see
 * txpool/decode.ts) and the point-evaluation precompile (0x0a), whose calls then fail as an invalid
 * proof would.
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
