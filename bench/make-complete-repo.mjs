#!/usr/bin/env node
// node bench/make-complete-repo.mjs SOURCE OUT [REF] [--every-commit]
//
// A complete repository (nothing missing) from a partial clone: the first-parent history of REF
// (default HEAD) in SOURCE replayed with fast-import, each commit's changes as they were, leaving
// out the blobs the partial clone lacks. With --every-commit, every commit but merges, oldest
// first, each one's changes applied on a single line of history: bigger (every blob of the
// history), with trees that mix branches. The corpus repositories and git's own snapshot are partial
// clones, which neither git nor packwright can serve in full; this one can, with the shape and the
// contents of a real history (the serving benchmarks clone it).
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const every = process.argv.includes('--every-commit');
const [source, out, ref = 'HEAD'] = process.argv.slice(2).filter((a) => a !== '--every-commit');
if (source === undefined || out === undefined) {
  console.error('usage: node bench/make-complete-repo.mjs SOURCE OUT [REF]');
  process.exit(2);
}
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
execFileSync('git', ['init', '-q', '--bare', '-b', 'main', out]);
const sourceObjects = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-path', 'objects'], { cwd: source }).toString().trim();
writeFileSync(join(out, 'objects', 'info', 'alternates'), `${sourceObjects}\n`);

// The blobs the source lacks: rev-list says `?<id>` for each.
const missing = new Set();
const walk = every ? ['--no-merges', '--topo-order'] : ['--first-parent'];
const list = spawn('git', ['rev-list', '--objects', ...walk, '--missing=print', ref], { cwd: source, stdio: ['ignore', 'pipe', 'inherit'] });
for await (const line of createInterface({ input: list.stdout })) if (line.startsWith('?')) missing.add(line.slice(1));

const log = spawn('git', ['-c', 'core.quotePath=false', 'log', ...walk, '--reverse', '--raw', '-r', '--no-renames', '--no-abbrev', '--date=raw', '--format=commit %H%n%cn <%ce> %cd', ref], { cwd: source, stdio: ['ignore', 'pipe', 'inherit'] });
const fastImport = spawn('git', ['fast-import', '--quiet'], { cwd: out, stdio: ['pipe', 'inherit', 'inherit'] });
const write = (text) => (fastImport.stdin.write(text) ? undefined : new Promise((r) => fastImport.stdin.once('drain', r)));
let mark = 0;
let pending = undefined;
const flush = async () => {
  if (pending === undefined) return;
  const msg = `replayed ${pending.id}\n`;
  await write(`commit refs/heads/main\nmark :${++mark}\ncommitter ${pending.who}\ndata ${Buffer.byteLength(msg)}\n${msg}${mark > 1 ? `from :${mark - 1}\n` : ''}${pending.changes.join('')}\n`);
  pending = undefined;
};
let expectWho = false;
for await (const line of createInterface({ input: log.stdout })) {
  if (line.startsWith('commit ')) {
    await flush();
    pending = { id: line.slice(7), who: '', changes: [] };
    expectWho = true;
  } else if (expectWho) {
    pending.who = line;
    expectWho = false;
  } else if (line.startsWith(':')) {
    const tab = line.indexOf('\t');
    const [, newMode, , newId, status] = line.slice(1, tab).split(' ');
    const path = line.slice(tab + 1);
    if (status === 'D') pending.changes.push(`D ${path}\n`);
    else if (!missing.has(newId)) pending.changes.push(`M ${newMode} ${newId} ${path}\n`);
  }
}
await flush();
fastImport.stdin.end();
await new Promise((resolve, reject) => fastImport.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`)))));
// Everything into the repository's own pack, then no more borrowing.
// What the replay reaches, borrowed objects included, into a pack of the repository's own (not a
// copy of the source's promisor pack), then one pack of it alone.
execFileSync('git', ['pack-objects', '--all', '--revs', '-q', join(out, 'objects', 'pack', 'pack')], { cwd: out, input: '', stdio: ['pipe', 'ignore', 'inherit'] });
rmSync(join(out, 'objects', 'info', 'alternates'));
execFileSync('git', ['-c', 'repack.writeBitmaps=false', 'repack', '-adq'], { cwd: out });
execFileSync('git', ['commit-graph', 'write', '--reachable'], { cwd: out });
if (!existsSync(join(out, 'HEAD'))) throw new Error('no repository made');
console.log(`${out}: ${mark} commits, ${missing.size} missing blobs left out`);
