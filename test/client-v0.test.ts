import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, GIT_ENV, makeRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { packwrightServers } from './helpers/servers.js';
import { execFileAsync } from './helpers/spawn-client.js';


/** git, asynchronously (a server in this process may be answering it). */
async function gitAsync(cwd: string, args: string[]): Promise<void> {
  await execFileAsync('git', args, { cwd, env: GIT_ENV, maxBuffer: 1 << 28 });
}

/** What a clone or fetch left that git's leaves the same: refs, the shallow boundary, every object. */
function state(repo: string): string {
  const shallow = join(repo, 'shallow');
  return [
    git(repo, ['for-each-ref', '--format=%(objectname) %(refname)']).toString(),
    existsSync(shallow) ? readFileSync(shallow, 'utf8').split('\n').sort().join('\n') : 'not shallow',
    git(repo, ['cat-file', '--batch-all-objects', '--batch-check']).toString(),
  ].join('\n');
}

/** One more commit on main in `src`. */
function commit(src: string, message: string): void {
  const tree = git(src, ['rev-parse', 'main^{tree}']).toString().trim();
  const blob = git(src, ['hash-object', '-w', '--stdin'], `${message}\n`).toString().trim();
  const next = git(src, ['mktree'], `${git(src, ['ls-tree', tree]).toString()}100644 blob ${blob}\t${message}\n`).toString().trim();
  git(src, ['update-ref', 'refs/heads/main', git(src, ['commit-tree', next, '-p', 'main', '-m', message]).toString().trim()]);
}

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`protocol v0 (protocol.version=0): clones, fetches with negotiation and deepening as git's, from git's upload-pack over a stream and packwright's over HTTP (${format})`, async () => {
    using dir = tempDir();
    const src = join(makeRepo(dir.path, format, 6), '.git');
    await using servers = await packwrightServers(src, GIT_ENV);
    const transports: [string, string, string[]][] = [
      // A stream (stateful): git's own upload-pack, spawned as for an ssh or local remote.
      ['stream', `file://${src}`, ['--upload-pack=git-upload-pack']],
      // Stateless RPC: each round a request of its own.
      ['http', servers.http, []],
    ];
    for (const [name, url, extra] of transports) {
      const ours = join(dir.path, `${name}-ours.git`);
      const theirs = join(dir.path, `${name}-theirs.git`);
      const r = await runPackwright(dir.path, ['-c', 'protocol.version=0', 'clone', '-q', '--bare', ...extra, url, ours], { env: GIT_ENV });
      assert.equal(r.status, 0, r.stderr);
      await gitAsync(dir.path, ['-c', 'protocol.version=0', 'clone', '-q', '--bare', ...extra, url, theirs]);
      git(ours, ['fsck', '--full', '--no-dangling']);
      assert.equal(state(ours), state(theirs), `${name}: clone`);
      // Shallow clones, then deepened.
      const shallowOurs = join(dir.path, `${name}-shallow-ours.git`);
      const shallowTheirs = join(dir.path, `${name}-shallow-theirs.git`);
      const s = await runPackwright(dir.path, ['-c', 'protocol.version=0', 'clone', '-q', '--bare', '--depth=2', ...extra, url, shallowOurs], { env: GIT_ENV });
      assert.equal(s.status, 0, s.stderr);
      await gitAsync(dir.path, ['-c', 'protocol.version=0', 'clone', '-q', '--bare', '--depth=2', ...extra, url, shallowTheirs]);
      assert.equal(state(shallowOurs), state(shallowTheirs), `${name}: shallow clone`);
      const d = await runPackwright(shallowOurs, ['-c', 'protocol.version=0', 'fetch', '-q', '--deepen=2', ...extra], { env: GIT_ENV });
      assert.equal(d.status, 0, d.stderr);
      await gitAsync(shallowTheirs, ['-c', 'protocol.version=0', 'fetch', '-q', '--deepen=2', ...extra]);
      assert.equal(state(shallowOurs), state(shallowTheirs), `${name}: deepened`);
    }
    // New commits: fetches that offer haves and are told what is common (a round or more).
    for (let i = 0; i < 3; i++) commit(src, `more-${i}`);
    for (const [name, , extra] of transports) {
      const ours = join(dir.path, `${name}-ours.git`);
      const theirs = join(dir.path, `${name}-theirs.git`);
      const f = await runPackwright(ours, ['-c', 'protocol.version=0', 'fetch', '-q', ...extra, 'origin', '+refs/heads/*:refs/heads/*'], { env: GIT_ENV });
      assert.equal(f.status, 0, f.stderr);
      await gitAsync(theirs, ['-c', 'protocol.version=0', 'fetch', '-q', ...extra, 'origin', '+refs/heads/*:refs/heads/*']);
      git(ours, ['fsck', '--full', '--no-dangling']);
      assert.equal(state(ours), state(theirs), `${name}: fetch`);
      // Nothing new: the conversation ends with no wants.
      const none = await runPackwright(ours, ['-c', 'protocol.version=0', 'fetch', '-q', ...extra, 'origin', '+refs/heads/*:refs/heads/*'], { env: GIT_ENV });
      assert.equal(none.status, 0, none.stderr);
    }
  });
}
