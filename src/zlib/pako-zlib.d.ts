// pako's port of zlib's own API (its lib/zlib modules, CommonJS), which @types/pako does not
// describe; reference-deflate.ts drives a stream through it and states the shapes it uses.
declare module 'pako/lib/zlib/deflate.js' {
  const engine: unknown;
  export default engine;
}
declare module 'pako/lib/zlib/zstream.js' {
  const ZStream: unknown;
  export default ZStream;
}
