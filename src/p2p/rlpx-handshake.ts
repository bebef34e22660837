/**
 * The RLPx encryption handshake (EIP-8 auth/ack, ECIES over secp256k1) and the secrets it yields.
 * Pure functions over bytes: the session in ./rlpx-session.ts moves them over a socket.
 *
 * ECIES: `0x04 || R (64) || iv (16) || AES-128-CTR(kE, iv, m) || HMAC-SHA256(kM, iv || c || prefix)`,
 * with `kE || kM0 = concatKDF-SHA256(ECDH(r, K))`, `kM = sha256(kM0)`, and `prefix` the 2-byte size
 * of the EIP-8 packet. Both sides then derive the frame secrets from the ephemeral ECDH and nonces.
 */
import { createCipheriv, createDecipheriv, createECDH, createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { RLP } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3.js';
import secp256k1 from 'secp256k1';

/** ECIES overhead: public key 65 + iv 16 + MAC 32. */
const ECIES_OVERHEAD = 113;
const HANDSHAKE_VERSION = 4;

export class HandshakeError extends Error {}

/** The uncompressed public key without its 0x04 prefix (the node id). */
export function nodeIdOf(privateKey: Uint8Array): Uint8Array {
  return secp256k1.publicKeyCreate(privateKey, false).subarray(1);
}

/** The x coordinate of the shared point: what devp2p calls the ECDH secret. */
export function ecdhX(privateKey: Uint8Array, publicKey64: Uint8Array): Uint8Array {
  const ecdh = createECDH('secp256k1');
  ecdh.setPrivateKey(privateKey);
  return new Uint8Array(ecdh.computeSecret(withPrefix(publicKey64)));
}

function withPrefix(publicKey64: Uint8Array): Uint8Array {
  const key = new Uint8Array(65);
  key[0] = 4;
  key.set(publicKey64, 1);
  return key;
}

function concatKdf(secret: Uint8Array): Uint8Array {
  // 32 bytes are needed and SHA-256 gives 32: one round, counter 1, no shared info.
  return new Uint8Array(createHash('sha256').update(Uint8Array.of(0, 0, 0, 1)).update(secret).digest());
}

export function eciesEncrypt(remoteId: Uint8Array, message: Uint8Array, macData: Uint8Array): Uint8Array {
  const ephemeral = randomPrivateKey();
  const key = concatKdf(ecdhX(ephemeral, remoteId));
  const encryptionKey = key.subarray(0, 16);
  const macKey = createHash('sha256').update(key.subarray(16, 32)).digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-128-ctr', encryptionKey, iv);
  const ciphertext = Buffer.concat([cipher.update(message), cipher.final()]);
  const tag = createHmac('sha256', macKey).update(iv).update(ciphertext).update(macData).digest();
  return Buffer.concat([secp256k1.publicKeyCreate(ephemeral, false), iv, ciphertext, tag]);
}

export function eciesDecrypt(privateKey: Uint8Array, data: Uint8Array, macData: Uint8Array): Uint8Array {
  if (data.length < ECIES_OVERHEAD || data[0] !== 4) throw new HandshakeError('not an ECIES message');
  const ephemeralPublic = data.subarray(1, 65);
  const iv = data.subarray(65, 81);
  const ciphertext = data.subarray(81, data.length - 32);
  const tag = data.subarray(data.length - 32);
  let key: Uint8Array;
  try {
    key = concatKdf(ecdhX(privateKey, ephemeralPublic));
  } catch {
    throw new HandshakeError('invalid ECIES public key');
  }
  const macKey = createHash('sha256').update(key.subarray(16, 32)).digest();
  const expected = createHmac('sha256', macKey).update(iv).update(ciphertext).update(macData).digest();
  if (!timingSafeEqual(expected, tag)) throw new HandshakeError('ECIES MAC mismatch');
  const decipher = createDecipheriv('aes-128-ctr', key.subarray(0, 16), iv);
  return new Uint8Array(Buffer.concat([decipher.update(ciphertext), decipher.final()]));
}

export function randomPrivateKey(): Uint8Array {
  for (;;) {
    const key = new Uint8Array(randomBytes(32));
    if (secp256k1.privateKeyVerify(key)) return key;
  }
}

function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** EIP-8 packet: 2-byte size prefix, then the ECIES ciphertext of RLP body plus random padding. */
function sealPacket(remoteId: Uint8Array, body: Uint8Array): Uint8Array {
  const padding = randomBytes(100 + Math.floor(Math.random() * 200));
  const plain = Buffer.concat([body, padding]);
  const prefix = new Uint8Array(2);
  const size = plain.length + ECIES_OVERHEAD;
  prefix[0] = size >>> 8;
  prefix[1] = size & 0xff;
  return Buffer.concat([prefix, eciesEncrypt(remoteId, plain, prefix)]);
}

/** The size of a whole EIP-8 packet from its first two bytes. */
export function packetSize(prefix: Uint8Array): number {
  return 2 + ((prefix[0]! << 8) | prefix[1]!);
}

function openPacket(privateKey: Uint8Array, packet: Uint8Array): unknown[] {
  const plain = eciesDecrypt(privateKey, packet.subarray(2), packet.subarray(0, 2));
  // The random padding follows the RLP list; decode only the list.
  const decoded = RLP.decode(plain, true).data;
  if (!Array.isArray(decoded)) throw new HandshakeError('handshake body is not a list');
  return decoded;
}

function bytesAt(list: unknown[], index: number, length: number, what: string): Uint8Array {
  const value = list[index];
  if (!(value instanceof Uint8Array) || value.length !== length) throw new HandshakeError(`bad ${what} in handshake`);
  return value;
}

export interface InitiatorState {
  auth: Uint8Array;
  ephemeralKey: Uint8Array;
  nonce: Uint8Array;
}

export function createAuth(privateKey: Uint8Array, remoteId: Uint8Array): InitiatorState {
  const ephemeralKey = randomPrivateKey();
  const nonce = new Uint8Array(randomBytes(32));
  const token = ecdhX(privateKey, remoteId);
  const { signature, recid } = secp256k1.ecdsaSign(xor(token, nonce), ephemeralKey);
  const sig = new Uint8Array(65);
  sig.set(signature);
  sig[64] = recid;
  const body = RLP.encode([sig, nodeIdOf(privateKey), nonce, HANDSHAKE_VERSION]);
  return { auth: sealPacket(remoteId, body), ephemeralKey, nonce };
}

export interface ReceivedAuth {
  remoteId: Uint8Array;
  remoteEphemeralId: Uint8Array;
  remoteNonce: Uint8Array;
}

export function readAuth(privateKey: Uint8Array, auth: Uint8Array): ReceivedAuth {
  const list = openPacket(privateKey, auth);
  const sig = bytesAt(list, 0, 65, 'signature');
  const remoteId = bytesAt(list, 1, 64, 'public key');
  const remoteNonce = bytesAt(list, 2, 32, 'nonce');
  const token = ecdhX(privateKey, remoteId);
  let remoteEphemeral: Uint8Array;
  try {
    remoteEphemeral = secp256k1.ecdsaRecover(sig.subarray(0, 64), sig[64]!, xor(token, remoteNonce), false);
  } catch {
    throw new HandshakeError('auth signature does not recover');
  }
  return { remoteId, remoteEphemeralId: remoteEphemeral.subarray(1), remoteNonce };
}

export interface RecipientState {
  ack: Uint8Array;
  ephemeralKey: Uint8Array;
  nonce: Uint8Array;
}

export function createAck(remoteId: Uint8Array): RecipientState {
  const ephemeralKey = randomPrivateKey();
  const nonce = new Uint8Array(randomBytes(32));
  const body = RLP.encode([nodeIdOf(ephemeralKey), nonce, HANDSHAKE_VERSION]);
  return { ack: sealPacket(remoteId, body), ephemeralKey, nonce };
}

export function readAck(privateKey: Uint8Array, ack: Uint8Array): { remoteEphemeralId: Uint8Array; remoteNonce: Uint8Array } {
  const list = openPacket(privateKey, ack);
  return { remoteEphemeralId: bytesAt(list, 0, 64, 'ephemeral key'), remoteNonce: bytesAt(list, 1, 32, 'nonce') };
}

/** A running keccak-256 over everything sent (egress) or received (ingress): the frame MAC state. */
export type KeccakState = ReturnType<typeof keccak_256.create>;

export interface SessionSecrets {
  aesSecret: Uint8Array;
  macSecret: Uint8Array;
  egressMac: KeccakState;
  ingressMac: KeccakState;
}

/**
 * Frame secrets. `initiatorNonce`/`recipientNonce` by role; `authPacket`/`ackPacket` are the exact
 * bytes sent on the wire (with the EIP-8 size prefix).
 */
export function deriveSecrets(args: {
  initiator: boolean;
  ephemeralKey: Uint8Array;
  remoteEphemeralId: Uint8Array;
  initiatorNonce: Uint8Array;
  recipientNonce: Uint8Array;
  authPacket: Uint8Array;
  ackPacket: Uint8Array;
}): SessionSecrets {
  const ephemeralSecret = ecdhX(args.ephemeralKey, args.remoteEphemeralId);
  const nonceHash = keccak_256(Buffer.concat([args.recipientNonce, args.initiatorNonce]));
  const sharedSecret = keccak_256(Buffer.concat([ephemeralSecret, nonceHash]));
  const aesSecret = keccak_256(Buffer.concat([ephemeralSecret, sharedSecret]));
  const macSecret = keccak_256(Buffer.concat([ephemeralSecret, aesSecret]));
  const initiatorEgress = keccak_256.create().update(xor(macSecret, args.recipientNonce)).update(args.authPacket);
  const recipientEgress = keccak_256.create().update(xor(macSecret, args.initiatorNonce)).update(args.ackPacket);
  return args.initiator
    ? { aesSecret, macSecret, egressMac: initiatorEgress, ingressMac: recipientEgress }
    : { aesSecret, macSecret, egressMac: recipientEgress, ingressMac: initiatorEgress };
}
