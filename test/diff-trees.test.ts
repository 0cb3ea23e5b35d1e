import { test } from 'node:test';
import assert from 'node:assert/strict';
import { git, makeHistoryRepo, runPackwright, tempDir, type Format } from './helpers/git.js';
import { Repository } from '../src/repo/index.js';

for (const format of ['sha1', 'sha256'] as Format[]) {
  test(`diffTrees and diff-tree give git diff-tree's changes (${format}): -r, -t, a file become a directory, a type change, paths, --stdin, --root, -z`, async () => {
    using dir = tempDir();
    const src = makeHistoryRepo(dir.path, format);
    // A file that becomes a directory, a file that becomes a symlink, a mode change.
    const blob = git(src, ['hash-object', '-w', '--stdin'], 'x\n').toString().trim();
    const other = git(src, ['hash-object', '-w', '--stdin'], 'y\n').toString().trim();
    const inner = git(src, ['mktree'], `100644 blob ${blob}\tin\n`).toString().trim();
    const before = git(src, ['mktree'], `100644 blob ${blob}\ta\n100644 blob ${blob}\tb\n100644 blob ${blob}\tc\n100644 blob ${blob}\td.txt\n`).toString().trim();
    const after = git(src, ['mktree'], `040000 tree ${inner}\ta\n120000 blob ${blob}\tb\n100755 blob ${blob}\tc\n100644 blob ${other}\td.txt\n100644 blob ${blob}\te\n`).toString().trim();
    using holder = { repo: Repository.openGitDir(src), [Symbol.dispose]() { this.repo.close(); } };
    const repo = holder.repo;
    const raw = (changes: Awaited<ReturnType<Repository['diffTrees']>>): string => changes.map((c) => {
      const m = (x: number | undefined): string => (x ?? 0).toString(8).padStart(6, '0');
      const z = '0'.repeat(format === 'sha1' ? 40 : 64);
      return `:${m(c.oldMode)} ${m(c.newMode)} ${c.oldId ?? z} ${c.newId ?? z} ${c.status}\t${c.path}\n`;
    }).join('');
    for (const [a, b, paths] of [[before, after, []], ['main~12', 'main', []], ['main~30', 'main', ['src']], ['topic', 'main', ['doc', 'Makefile']]] as [string, string, string[]][]) {
      assert.equal(raw(await repo.diffTrees(a, b, { paths })), git(src, ['diff-tree', '-r', a, b, '--', ...paths]).toString(), `${a} ${b} ${paths.join(' ')}`);
    }
    assert.equal(raw(await repo.diffTrees(before, after, { recursive: false })), git(src, ['diff-tree', before, after]).toString());
    assert.deepEqual((await repo.diffTrees(null, before)).map((c) => c.status), ['A', 'A', 'A', 'A']);
    const root = git(src, ['rev-list', '--max-parents=0', 'main']).toString().trim().split('\n')[0] as string;
    for (const args of [['-r', before, after], ['-t', 'main~12', 'main'], ['main~3', 'main'], ['-r', '--name-status', 'main~9', 'main'], ['-r', '-z', 'main~5', 'main'], ['-r', 'main'], ['--root', '-r', root], ['-r', root], ['--name-only', '-r', 'main~20', 'main', '--', 'src']]) {
      assert.equal((await runPackwright(src, ['diff-tree', ...args])).stdout.toString('latin1'), git(src, ['diff-tree', ...args]).toString('latin1'), args.join(' '));
    }
    const commits = git(src, ['rev-list', '-n', '12', 'main']).toString();
    assert.equal((await runPackwright(src, ['diff-tree', '--stdin', '-r'], { input: commits })).stdout.toString(), git(src, ['diff-tree', '--stdin', '-r'], commits).toString());
  });
}
