// hash-wasm's one-algorithm build (CommonJS/UMD, no types of its own): the same createKeccak as the
// package's index, whose bundle would also bring every other algorithm's WebAssembly into each thread.
declare module 'hash-wasm/dist/keccak.umd.min.js' {
  const keccakBuild: Pick<typeof import('hash-wasm'), 'createKeccak'>;
  export default keccakBuild;
}
