#!/usr/bin/env node
// node bench/api.mjs (packwright | isomorphic-git) (log | tree-blobs | diffs) GITDIR [REF]
//
// Issue 40's library benchmarks, one process per run so that each side pays its own start-up:
//   log         the first 1000 commits of REF's history, each parsed (id, author, message)
//   tree-blobs  every tree and blob at REF read (readTree down the whole tree, readBlob of each file)
//   diffs       the changes of each of REF's last 100 first-parent commits against its parent
// Prints what it found (counts and a digest), which is the same from both libraries, and the
// milliseconds the work took after the library was loaded (`ms`).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';

const [lib, op, gitdir, ref = 'main'] = process.argv.slice(2);
if (lib === undefined || op === undefined || gitdir === undefined) {
  console.error('usage: node bench/api.mjs (packwright|isomorphic-git) (log|tree-blobs|diffs) GITDIR [REF]');
  process.exit(2);
}
// What was found, one line each, hashed in sorted order (the libraries walk trees in different orders).
const lines = [];
const digest = { update: (line) => lines.push(line) };
let count = 0;
let bytes = 0;
let started = 0;

if (lib === 'packwright') {
  const { Repository } = await import('../dist/index.js');
  started = performance.now();
  const repo = Repository.openGitDir(gitdir);
  if (op === 'log') {
    for await (const c of repo.log({ ref, maxCount: 1000 })) {
      digest.update(`${c.id}\n${c.author.name}\n${c.message}\n`);
      count++;
    }
  } else if (op === 'tree-blobs') {
    const walk = async (tree, base) => {
      for (const e of await repo.readTree(tree)) {
        if (e.type === 'tree') await walk(e.id, `${base}${e.path}/`);
        else if (e.type === 'blob') {
          const data = await repo.readBlob(e.id);
          digest.update(`${base}${e.path} ${data.length}\n`);
          bytes += data.length;
          count++;
        }
      }
    };
    await walk(ref, '');
  } else if (op === 'diffs') {
    const commits = [];
    for await (const c of repo.log({ ref, maxCount: 101, firstParent: true })) commits.push(c);
    for (let i = 0; i + 1 < commits.length; i++) {
      for (const c of await repo.diffTrees(commits[i + 1].tree, commits[i].tree)) {
        digest.update(`${c.status} ${c.path}\n`);
        count++;
      }
    }
  }
  repo.close();
} else {
  const git = (await import('isomorphic-git')).default;
  started = performance.now();
  const cache = {};
  if (op === 'log') {
    for (const c of await git.log({ fs, gitdir, ref, depth: 1000, cache })) {
      digest.update(`${c.oid}\n${c.commit.author.name}\n${c.commit.message}\n`);
      count++;
    }
  } else if (op === 'tree-blobs') {
    const walk = async (oid, base) => {
      const { tree } = await git.readTree({ fs, gitdir, oid, cache });
      for (const e of tree) {
        if (e.type === 'tree') await walk(e.oid, `${base}${e.path}/`);
        else if (e.type === 'blob') {
          const { blob } = await git.readBlob({ fs, gitdir, oid: e.oid, cache });
          digest.update(`${base}${e.path} ${blob.length}\n`);
          bytes += blob.length;
          count++;
        }
      }
    };
    await walk(await git.resolveRef({ fs, gitdir, ref }), '');
  } else if (op === 'diffs') {
    const commits = await git.log({ fs, gitdir, ref, depth: 101, cache });
    // First parents only, as the packwright side walks them.
    const line = [];
    for (let c = commits[0]; c !== undefined && line.length < 101;) {
      line.push(c);
      const parent = c.commit.parent[0];
      c = parent === undefined ? undefined : commits.find((x) => x.oid === parent) ?? (await git.readCommit({ fs, gitdir, oid: parent, cache }));
    }
    for (let i = 0; i + 1 < line.length; i++) {
      // isomorphic-git's way to compare two trees: walk both, keep the paths whose entries differ.
      await git.walk({
        fs, gitdir, cache,
        trees: [git.TREE({ ref: line[i + 1].oid }), git.TREE({ ref: line[i].oid })],
        map: async (path, [a, b]) => {
          if (path === '.') return true;
          const [ta, tb] = [await a?.type(), await b?.type()];
          if (ta === 'tree' || tb === 'tree') {
            if (ta === 'tree' && tb === 'tree' && (await a.oid()) === (await b.oid())) return null;
            if (ta === 'tree' || tb === 'tree') return true;
          }
          const [oa, ob] = [await a?.oid(), await b?.oid()];
          const [ma, mb] = [await a?.mode(), await b?.mode()];
          if (oa === ob && ma === mb) return undefined;
          const status = a === null ? 'A' : b === null ? 'D' : ((ma & 0o170000) !== (mb & 0o170000) ? 'T' : 'M');
          digest.update(`${status} ${path}\n`);
          count++;
          return undefined;
        },
      });
    }
  }
}
const ms = Math.round(performance.now() - started);
lines.sort();
console.log(JSON.stringify({ lib, op, count, bytes, digest: createHash('sha256').update(lines.join('')).digest('hex').slice(0, 16), ms }));
