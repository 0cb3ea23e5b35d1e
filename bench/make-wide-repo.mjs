#!/usr/bin/env node
// node bench/make-wide-repo.mjs <dir> [commits] [files]: a bare repository of many objects and a
// few hundred commits, made with git fast-import from a seeded generator (the same ids every
// time): `files` text files in 50 directories, each commit rewriting 200 of them, then repacked
// with deltas as `git gc` would. 300 commits of 3000 files: ~74k objects.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const [dir, commitsArg = '300', filesArg = '3000'] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: make-wide-repo.mjs <dir> [commits] [files]');
const commits = Number(commitsArg);
const files = Number(filesArg);
let seed = 42;
const random = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};
const versions = new Array(files).fill(0);
const content = (f, v) => Array.from({ length: 40 }, (_, i) => `file ${f} line ${i} ${i % 7 === v % 7 ? `version ${v}` : 'steady text'}`).join('\n') + '\n';
const parts = [];
for (let c = 0; c < commits; c++) {
  parts.push(`commit refs/heads/main\nmark :${c + 1}\ncommitter W <w@example.com> ${1700000000 + c * 60} +0000\ndata 10\ncommit ${String(c).padStart(3, '0')}\n`);
  if (c > 0) parts.push(`from :${c}\n`);
  const touched = c === 0 ? Array.from({ length: files }, (_, i) => i) : Array.from({ length: 200 }, () => Math.floor(random() * files));
  for (const f of touched) {
    versions[f]++;
    const body = content(f, versions[f]);
    parts.push(`M 100644 inline d${f % 50}/f${f}.txt\ndata ${Buffer.byteLength(body)}\n${body}`);
  }
  parts.push('\n');
}
if (!existsSync(dir)) execFileSync('git', ['init', '-q', '--bare', dir]);
execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, input: parts.join(''), maxBuffer: 1 << 30 });
execFileSync('git', ['symbolic-ref', 'HEAD', 'refs/heads/main'], { cwd: dir });
execFileSync('git', ['repack', '-adfq', '--window=10', '--depth=50'], { cwd: dir });
