#!/usr/bin/env node
// node bench/make-deep-history-repo.mjs <dir> [commits]: a bare repository with a long history,
// made with git fast-import from a seeded generator (the same ids every time): `commits` commits
// (default 25,000) on main, each changing one to three of 600 small files in 30 directories two
// levels deep, a side branch merged back every 40 commits, an annotated tag every 500, then
// repacked as `git gc` would. Counting and commit walks over it are history-bound, where the
// corpus repositories are tree-bound.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const [dir, commitsArg = '25000'] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: make-deep-history-repo.mjs <dir> [commits]');
const commits = Number(commitsArg);
const FILES = 600;
let seed = 1234;
const random = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};
const versions = new Array(FILES).fill(0);
const path = (f) => `d${f % 30}/e${f % 7}/f${f}.txt`;
const body = (f) => `file ${f}\nversion ${versions[f]}\n${'steady line\n'.repeat(8)}`;
const parts = [];
let mark = 0;
let time = 1500000000;
const commit = (ref, from, merge, files) => {
  mark++;
  time += 1 + Math.floor(random() * 600);
  const msg = `commit ${mark}\n`;
  parts.push(`commit ${ref}\nmark :${mark}\ncommitter H <h@example.com> ${time} +0000\ndata ${msg.length}\n${msg}`);
  if (from !== undefined) parts.push(`from :${from}\n`);
  if (merge !== undefined) parts.push(`merge :${merge}\n`);
  for (const f of files) {
    versions[f]++;
    const text = body(f);
    parts.push(`M 100644 inline ${path(f)}\ndata ${Buffer.byteLength(text)}\n${text}`);
  }
  parts.push('\n');
  return mark;
};
const some = () => Array.from({ length: 1 + Math.floor(random() * 3) }, () => Math.floor(random() * FILES));
let main = commit('refs/heads/main', undefined, undefined, Array.from({ length: FILES }, (_, i) => i));
let made = 1;
let nextTag = 500;
while (made < commits) {
  if (made % 40 === 0) {
    // A side branch of three commits from a few commits back, merged into main.
    let side = commit('refs/heads/side', main, undefined, some());
    side = commit('refs/heads/side', side, undefined, some());
    main = commit('refs/heads/main', main, side, some());
    made += 3;
  } else {
    main = commit('refs/heads/main', main, undefined, some());
    made++;
  }
  if (made < nextTag) continue;
  nextTag += 500;
  parts.push(`tag v${made}\nfrom :${main}\ntagger H <h@example.com> ${time} +0000\ndata 4\ntag\n\n`);
}
if (!existsSync(dir)) execFileSync('git', ['init', '-q', '--bare', dir]);
execFileSync('git', ['fast-import', '--quiet'], { cwd: dir, input: parts.join(''), maxBuffer: 1 << 30 });
execFileSync('git', ['symbolic-ref', 'HEAD', 'refs/heads/main'], { cwd: dir });
execFileSync('git', ['repack', '-adq'], { cwd: dir });
