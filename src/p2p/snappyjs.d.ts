// snappyjs (a dependency of @ethereumjs/devp2p) ships no types; only what Basalt calls is declared.
declare module 'snappyjs' {
  export function compress(input: Uint8Array): Uint8Array;
  export function uncompress(input: Uint8Array, maxLength?: number): Uint8Array;
}
