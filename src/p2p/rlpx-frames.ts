/**
 * RLPx framing after the handshake: AES-256-CTR over a continuous key stream per direction, and the
 * keccak "egress/ingress MAC" over every header and frame, each seeded through AES-256-ECB(macSecret).
 *
 * Frame on the wire: `enc(header 16) || headerMac 16 || enc(frameData padded to 16) || frameMac 16`,
 * header = `frameSize (3 bytes) || RLP([0, 0]) || zero padding`, frameData = `RLP(code) || payload`.
 */
import { createCipheriv, timingSafeEqual } from 'node:crypto';
import type { Cipher } from 'node:crypto';
import { RLP } from '@ethereumjs/rlp';
import type { KeccakState, SessionSecrets } from './rlpx-handshake.js';

/** RLP([0, 0]): capability id and context id, always zero (devp2p never used them). */
const HEADER_DATA = Uint8Array.of(0xc2, 0x80, 0x80);
export const FRAME_HEADER_SIZE = 32;

export class FrameError extends Error {}

export interface Frame {
  code: number;
  payload: Uint8Array;
}

export class FrameCodec {
  private readonly egressCipher: Cipher;
  private readonly ingressCipher: Cipher;
  private readonly macCipher: Cipher;
  private readonly egressMac: KeccakState;
  private readonly ingressMac: KeccakState;

  constructor(secrets: SessionSecrets) {
    const zeroIv = new Uint8Array(16);
    this.egressCipher = createCipheriv('aes-256-ctr', secrets.aesSecret, zeroIv);
    this.ingressCipher = createCipheriv('aes-256-ctr', secrets.aesSecret, zeroIv);
    this.macCipher = createCipheriv('aes-256-ecb', secrets.macSecret, null).setAutoPadding(false);
    this.egressMac = secrets.egressMac;
    this.ingressMac = secrets.ingressMac;
  }

  encode(code: number, payload: Uint8Array): Uint8Array {
    const codeBytes = RLP.encode(code);
    const frameSize = codeBytes.length + payload.length;
    if (frameSize > 0xffffff) throw new FrameError('frame too large');
    const header = new Uint8Array(16);
    header[0] = frameSize >>> 16;
    header[1] = (frameSize >>> 8) & 0xff;
    header[2] = frameSize & 0xff;
    header.set(HEADER_DATA, 3);
    const headerCiphertext = this.egressCipher.update(header);
    const headerMac = this.updateMac(this.egressMac, headerCiphertext);

    const padded = new Uint8Array(roundUp16(frameSize));
    padded.set(codeBytes);
    padded.set(payload, codeBytes.length);
    const frameCiphertext = this.egressCipher.update(padded);
    this.egressMac.update(frameCiphertext);
    const frameMac = this.updateMac(this.egressMac, digest(this.egressMac));
    return Buffer.concat([headerCiphertext, headerMac, frameCiphertext, frameMac]);
  }

  /** Checks and decrypts a 32-byte header; answers the number of frame bytes that follow (with MAC). */
  readHeader(bytes: Uint8Array): { frameSize: number; bodyLength: number } {
    const ciphertext = bytes.subarray(0, 16);
    const expected = this.updateMac(this.ingressMac, ciphertext);
    if (!timingSafeEqual(expected, bytes.subarray(16, 32))) throw new FrameError('header MAC mismatch');
    const header = this.ingressCipher.update(ciphertext);
    const frameSize = (header[0]! << 16) | (header[1]! << 8) | header[2]!;
    return { frameSize, bodyLength: roundUp16(frameSize) + 16 };
  }

  readBody(bytes: Uint8Array, frameSize: number): Frame {
    const ciphertext = bytes.subarray(0, bytes.length - 16);
    this.ingressMac.update(ciphertext);
    const expected = this.updateMac(this.ingressMac, digest(this.ingressMac));
    if (!timingSafeEqual(expected, bytes.subarray(bytes.length - 16))) throw new FrameError('frame MAC mismatch');
    const plain = new Uint8Array(this.ingressCipher.update(ciphertext)).subarray(0, frameSize);
    let decoded: { data: unknown; remainder: Uint8Array };
    try {
      decoded = RLP.decode(plain, true) as { data: unknown; remainder: Uint8Array };
    } catch {
      throw new FrameError('frame without a message code');
    }
    if (!(decoded.data instanceof Uint8Array) || decoded.data.length > 4) throw new FrameError('bad message code');
    let code = 0;
    for (const byte of decoded.data) code = code * 256 + byte;
    return { code, payload: decoded.remainder };
  }

  /** mac.update(AES-ECB(macSecret, mac.digest()[:16]) XOR seed); answers the new digest[:16]. */
  private updateMac(mac: KeccakState, seed: Uint8Array): Uint8Array {
    const encrypted = this.macCipher.update(digest(mac).subarray(0, 16));
    const mixed = new Uint8Array(16);
    for (let i = 0; i < 16; i++) mixed[i] = encrypted[i]! ^ seed[i]!;
    mac.update(mixed);
    return digest(mac).subarray(0, 16);
  }
}

/** The running hash's current value, leaving the state open for more input. */
function digest(mac: KeccakState): Uint8Array {
  return mac.clone().digest();
}

function roundUp16(n: number): number {
  return (n + 15) & ~15;
}
