#!/usr/bin/env node
// node scripts/check-package-types.mjs   (after npm run build)
//
// Issue 40's check of the package as users get it: `npm pack`, install the tarball into a new
// TypeScript app, and compile an app that uses the repository API, the server and the client
// with `strict` and `exactOptionalPropertyTypes` (no casts). Exits 1 with tsc's errors when the
// published types do not hold up. Not in the suite (it installs and compiles, ~20 s).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = mkdtempSync(join(tmpdir(), 'packwright-types-'));
try {
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: root }).toString().trim().split('\n').pop();
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--silent', '--no-audit', '--no-fund', '--prefer-offline', join(dir, tarball)], { cwd: dir, stdio: 'inherit' });
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, exactOptionalPropertyTypes: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [join(root, 'node_modules', '@types')] },
    files: ['app.ts'],
  }));
  writeFileSync(join(dir, 'app.ts'), `
import { Repository, fromHex, hashObject, type CommitObject, type TreeEntryObject, type Person, type StoredObject } from 'packwright';
import { listTree, type ListedTreeEntry } from 'packwright/odb';
import { parseTree, parseCommit } from 'packwright/objects';
import { diffTrees } from 'packwright/diff';
import { receivePack, createGitHttpHandler, type ReceiveCommandResult } from 'packwright/serve';
import { listServerRefs, cloneBare, fetchMissing, type FetchMissingResult, type ServerRef } from 'packwright/client';
import { Readable } from 'node:stream';

export async function use(path: string): Promise<void> {
  const repo = Repository.open(path);
  const commit: CommitObject = await repo.readCommit('HEAD');
  const who: Person = commit.author;
  if (commit.gpgsig !== undefined) console.log(commit.gpgsig.length);
  const tag = await repo.readTag('v1.0');
  if (tag.type === 'commit' && tag.tagger !== undefined) console.log(tag.tagger.name);
  const entries: TreeEntryObject[] = await repo.readTree('HEAD');
  for (const e of entries) if (e.type === 'blob') console.log(e.mode.toString(8), e.path, e.pathBytes.length);
  const readme: Buffer = await repo.readBlob({ commit: 'HEAD', path: 'README.md' });
  for await (const c of repo.log({ ref: 'main', maxCount: 10, order: 'topo', since: new Date(0) })) console.log(c.id, c.message);
  for (const d of await repo.diffTrees('HEAD~1', 'HEAD', { paths: ['src'] })) console.log(d.status, d.path, d.oldId ?? '-', d.newMode ?? 0);
  console.log(diffTrees(repo.objects, undefined, repo.resolve('HEAD^{tree}')).length);
  const blob = await repo.writeBlob('x');
  const tree = await repo.writeTree([{ mode: 0o100644, path: 'x', id: blob }]);
  const id = await repo.writeCommit({ tree, parents: [commit.id], author: who, message: 'm\\n' });
  await repo.writeTag({ object: id, type: 'commit', tag: 't', tagger: who, message: 'm\\n' });
  await repo.updateRef({ ref: 'refs/heads/x', value: id, oldValue: null, message: 'x' });
  console.log(await repo.listBranches(), await repo.listTags(), await repo.currentBranch(), await repo.resolveRef('x'), await repo.isAncestor(commit.id, id), await repo.mergeBase('x', 'main'));
  for (const r of await repo.listRefs()) console.log(r.name, r.peeled ?? '');
  const results: ReceiveCommandResult[] = await receivePack(repo, {
    input: Readable.from([]), output: () => undefined, statelessRpc: true,
    beforeUpdate: ({ commands }) => Object.fromEntries(commands.filter((c) => c.ref.startsWith('refs/heads/wip')).map((c) => [c.ref, 'no'])),
  });
  console.log(results.map((r) => r.error ?? 'ok'), readme.length);
  createGitHttpHandler({ repository: () => repo, authorize: (service, _r, _p, request) => service === 'upload-pack' || (request.headers?.['authorization'] !== undefined ? { pusher: { name: 'n', email: 'e' } } : { refuse: 401, headers: [['WWW-Authenticate', 'Basic']] }) });
  const refs: ServerRef[] = await listServerRefs('https://example.com/r.git', { prefixes: ['refs/heads/'], symrefs: true });
  await cloneBare('https://example.com/r.git', {
    dir: '/tmp/x.git', mirror: false, onProgress: (t) => process.stderr.write(t), filter: 'blob:none',
    onAuthSuccess: (url, c) => console.log(url, c.username), onAuthFailure: (url, c) => console.log(url, c.username),
  });
  const lazily: FetchMissingResult = await fetchMissing({ dir: '/tmp/x.git', ids: [commit.tree], signal: undefined });
  console.log(lazily.objects);
  console.log(refs.length);
  // The store level names types too; options take undefined where a value may be missing.
  const maybeSignal: AbortSignal | undefined = undefined;
  const head: StoredObject = await repo.store.readAsync(fromHex(commit.id));
  if (head.type === 'commit') console.log(parseCommit(head.data).tree.length, hashObject(repo.store.format, head.type, head.data).length);
  const header = repo.objects.header(fromHex(commit.tree));
  if (header.type === 'tree') for (const e of parseTree(repo.objects.read(fromHex(commit.tree)).data, repo.objects.hashLength)) console.log(e.type, e.name, e.nameBytes.length, e.mode);
  const listed: ListedTreeEntry[] = [...listTree(repo.objects, fromHex(commit.tree), { recursive: true, paths: ['src/', Buffer.from('café')] })];
  for (const e of listed) if (e.type === 'blob') console.log(e.path, e.pathBytes.length);
  for await (const o of repo.store.readMany([fromHex(commit.id)], { signal: maybeSignal })) if (o.found && o.type === 'commit') console.log(o.data.length);
  for await (const c of repo.log({ ref: 'main', maxCount: undefined, paths: undefined })) console.log(c.id);
  repo.close();
}
`);
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { stdio: 'inherit' });
  console.log('the packed package compiles under strict and exactOptionalPropertyTypes');
} catch (e) {
  process.exitCode = 1;
  if (e instanceof Error && !('status' in e)) console.error(e.message);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
