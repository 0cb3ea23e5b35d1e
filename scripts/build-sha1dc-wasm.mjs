#!/usr/bin/env node
// Writes src/hash/sha1dc/assembly/conditions.ts from the derived conditions, and builds the
// AssemblyScript into src/hash/sha1dc/sha1dc-wasm.ts, the module as base64, which ships with the
// package: users need no toolchain. Run it (after `npm run build`) when the AssemblyScript or the
// conditions change; test/sha1dc.test.ts checks that both committed files are what they build to.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildSha1dcWasm, conditionsSource, CONDITIONS_SOURCE, wasmModuleSource } from './sha1dc-wasm-build.mjs';

const conditions = await conditionsSource();
writeFileSync(CONDITIONS_SOURCE, conditions);
const out = fileURLToPath(new URL('../src/hash/sha1dc/sha1dc-wasm.ts', import.meta.url));
writeFileSync(out, wasmModuleSource(await buildSha1dcWasm(conditions)));
console.log(`wrote ${CONDITIONS_SOURCE} and ${out}`);
