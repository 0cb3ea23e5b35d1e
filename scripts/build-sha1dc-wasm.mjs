#!/usr/bin/env node
// Builds src/hash/sha1dc/assembly/sha1dc.ts (AssemblyScript) into src/hash/sha1dc/sha1dc-wasm.ts, the
// module as base64, which ships with the package: users need no toolchain. Run it after changing the
// AssemblyScript source; test/sha1dc.test.ts checks that the committed module is what the source builds to.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildSha1dcWasm, wasmModuleSource } from './sha1dc-wasm-build.mjs';

const out = fileURLToPath(new URL('../src/hash/sha1dc/sha1dc-wasm.ts', import.meta.url));
writeFileSync(out, wasmModuleSource(await buildSha1dcWasm()));
console.log(`wrote ${out}`);
