#!/usr/bin/env node
// Writes src/hash/sha1dc/unavoidable-conditions.ts from the derivation in derive-conditions.ts.
// Run after `npm run build` whenever the derivation or the vectors change; a test checks that the
// committed table is what the derivation gives.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { conditionTableSource } from '../dist/hash/sha1dc/condition-table.js';

const out = fileURLToPath(new URL('../src/hash/sha1dc/unavoidable-conditions.ts', import.meta.url));
writeFileSync(out, conditionTableSource());
console.log(`wrote ${out}`);
