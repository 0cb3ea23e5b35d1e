import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { git, GIT_ENV, tempDir } from './helpers/git.js';
import { execGit, spawnGit } from './helpers/spawn-client.js';
import { configFromEnvironment, GitConfig, parseColor, wantColor, wildmatch } from '../src/config/index.js';
import { isPackwrightError } from '../src/errors/index.js';

/** `git config --list` of what packwright read: `key=value`, or `key` alone for a bare boolean. */
function listOf(config: GitConfig): string {
  return config.entries.map((e) => (e.value === null ? `${e.key}\n` : `${e.key}=${e.value}\n`)).join('');
}

/** git's answer, or undefined when git fails (exit status 1: unset). */
function gitConfig(cwd: string, args: string[], gitDir?: string): string | undefined {
  try {
    return git(cwd, [...(gitDir === undefined ? [] : ['--git-dir', gitDir]), 'config', ...args]).toString();
  } catch (e) {
    if ((e as { status?: number }).status === 1) return undefined;
    throw e;
  }
}

const TRICKY = [
  '\ufeff# a byte order mark, then a comment',
  '; another comment',
  '[core]',
  '\tbare',
  '\tempty =',
  '\tFileMode = false ; a comment after a value',
  '\tspaced =   leading and trailing   ',
  '\ttabs = a\t\tb',
  '\tquoted = " kept  spaces " and "# not a comment"',
  '\tescapes = tab\\tnewline\\nbackslash\\\\quote\\"bs\\b',
  '\tcontinued = first \\',
  'second',
  '[remote "origin"]',
  '\turl = https://example.com/repo.git',
  '\tfetch = +refs/heads/*:refs/remotes/origin/*',
  '\tfetch = +refs/tags/*:refs/tags/*',
  '[remote "Upper Case \\"quoted\\" \\\\ sub"]',
  '\turl = x',
  '[Branch.Main]',
  '\tremote = origin',
  '[section.Sub "ext"]  ',
  '\tKEY-with-Dash = 1',
  '[a]b = inline',
  '[multi]',
  '\tv = 1',
  '\tv = 2',
  '[multi]',
  '\tv = 3\r',
  '\tlast = no newline at the end',
].join('\n');

test('a config file reads as git reads it: sections, subsections, quoting, escapes, comments, continuations', () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'config');
    writeFileSync(file, TRICKY);
    const config = GitConfig.read(file);
    assert.equal(listOf(config), gitConfig(dir.path, ['-f', file, '--list']));
    for (const key of ['core.filemode', 'CORE.FILEMODE', 'remote.origin.fetch', 'Remote.origin.URL', 'multi.v', 'core.bare', 'core.empty', 'branch.main.remote', 'section.sub.ext.key-with-dash', 'remote.Upper Case "quoted" \\ sub.url', 'remote.ORIGIN.url', 'a.b', 'no.such']) {
      const all = config.getAll(key).map((v) => `${v ?? ''}\n`).join('');
      assert.equal(all === '' ? undefined : all, gitConfig(dir.path, ['-f', file, '--get-all', key]), `--get-all ${key}`);
      const one = config.get(key);
      assert.equal(one === undefined ? undefined : `${one ?? ''}\n`, gitConfig(dir.path, ['-f', file, '--get', key]), `--get ${key}`);
    }
  } finally {
    dir[Symbol.dispose]();
  }
});

test('booleans and integers are typed as git types them (k, m, g; yes/on/1; an empty value is false)', () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'config');
    const bools = ['true', 'FALSE', 'yes', 'No', 'on', 'off', '1', '0', '42', '', '-1'];
    const ints = ['0', '12', '-7', '1k', '3M', '2g', '0x10', '010', '+5'];
    writeFileSync(file, ['[b]', '\tbare', ...bools.map((v, i) => `\tb${i} = ${v}`), '[i]', ...ints.map((v, i) => `\ti${i} = ${v}`), '\tbad = 12q', '\tword = yes'].join('\n') + '\n');
    const config = GitConfig.read(file);
    for (const key of ['b.bare', ...bools.map((_, i) => `b.b${i}`)]) {
      assert.equal(`${String(config.getBool(key))}\n`, gitConfig(dir.path, ['-f', file, '--type=bool', '--get', key]), key);
    }
    for (const key of ints.map((_, i) => `i.i${i}`)) {
      assert.equal(`${String(config.getInt(key))}\n`, gitConfig(dir.path, ['-f', file, '--type=int', '--get', key]), key);
    }
    for (const key of ['i.bad', 'i.word']) {
      assert.throws(() => git(dir.path, ['config', '-f', file, '--type=int', '--get', key]));
      assert.throws(() => config.getInt(key), (e: unknown) => isPackwrightError(e, 'CONFIG_INVALID'));
    }
    assert.throws(() => config.getBool('i.bad'), (e: unknown) => isPackwrightError(e, 'CONFIG_INVALID'));
  } finally {
    dir[Symbol.dispose]();
  }
});

test('a bad config line is CONFIG_INVALID naming the line and file git names', () => {
  const dir = tempDir();
  try {
    const bad = ['[core]\n\tok = 1\n\tx = "unterminated\n', '[core\nx = 1\n', '[core]\n\tx = bad \\q escape\n', '[s "sub]\n', '[core]\n\t9x = 1\n', '[s "a" ]\n'];
    // git reads a key before any section as a name without a dot.
    writeFileSync(join(dir.path, 'nosection'), 'key = no section\n');
    assert.equal(listOf(GitConfig.read(join(dir.path, 'nosection'))), gitConfig(dir.path, ['-f', join(dir.path, 'nosection'), '--list']));
    for (const [i, text] of bad.entries()) {
      const file = join(dir.path, `bad-${i}`);
      writeFileSync(file, text);
      let message = '';
      try {
        git(dir.path, ['config', '-f', file, '--list']);
      } catch (e) {
        message = (e as { stderr: Buffer }).stderr.toString();
      }
      const line = /bad config line (\d+)/.exec(message)?.[1];
      assert.ok(line !== undefined, `git rejects ${JSON.stringify(text)}: ${message}`);
      assert.throws(() => GitConfig.read(file), (e: unknown) => isPackwrightError(e, 'CONFIG_INVALID') && e.message === `bad config line ${line} in file ${file}`, JSON.stringify(text));
    }
  } finally {
    dir[Symbol.dispose]();
  }
});

test('include.path and includeIf (gitdir:, gitdir/i:, onbranch:) pull in the files git pulls in', () => {
  const dir = tempDir();
  try {
    const base = join(dir.path, 'Work');
    mkdirSync(join(base, 'inc', 'deeper'), { recursive: true });
    git(base, ['init', '-q', '-b', 'feature/login', 'proj']);
    const repo = join(base, 'proj');
    // A symlinked path to the same repository: git tries the real path, then the absolute one.
    symlinkSync(base, join(dir.path, 'link'));
    writeFileSync(join(base, 'inc', 'a'), '[x]\n\tfrom = a\n[include]\n\tpath = deeper/b\n');
    writeFileSync(join(base, 'inc', 'deeper', 'b'), '[x]\n\tfrom = b\n');
    const conditions = [
      'gitdir:proj/', 'gitdir:proj', 'gitdir:*/proj/.git', `gitdir:${base}/`, `gitdir:${base}/**/.git`, 'gitdir:PROJ/', 'gitdir/i:PROJ/',
      'gitdir:wrong/', `gitdir:${join(dir.path, 'link')}/`, 'gitdir:./proj/', 'gitdir:~/nowhere/',
      'onbranch:feature/login', 'onbranch:feature/', 'onbranch:feature/*', 'onbranch:*', 'onbranch:**', 'onbranch:main', 'onbranch:feature/log?n', 'onbranch:feature/[k-m]ogin',
    ];
    const lines = ['[include]', '\tpath = ../../inc/a', '[include]', '\tpath = missing-file-is-fine'];
    conditions.forEach((c, i) => lines.push(`[includeIf "${c}"]`, `\tpath = ${join(base, 'inc', `c${i}`)}`));
    conditions.forEach((c, i) => writeFileSync(join(base, 'inc', `c${i}`), `[cond]\n\tc${i} = ${c}\n`));
    const configFile = join(repo, '.git', 'config');
    writeFileSync(configFile, `${execFileSync('cat', [configFile]).toString()}${lines.join('\n')}\n`);
    for (const gitDir of [join(repo, '.git'), join(dir.path, 'link', 'proj', '.git')]) {
      const config = GitConfig.read(configFile, { gitDir });
      // git given the same --git-dir (through a symlink, it tries that path after the real one).
      const cwd = dir.path;
      assert.equal(config.getAll('x.from').join(','), (gitConfig(cwd, ['--get-all', 'x.from'], gitDir) ?? '').trim().split('\n').join(','));
      conditions.forEach((c, i) => {
        const ours = config.get(`cond.c${i}`);
        const theirs = gitConfig(cwd, ['--get', `cond.c${i}`], gitDir);
        assert.equal(ours === undefined ? undefined : `${ours}\n`, theirs, `includeIf "${c}" from ${gitDir}`);
      });
    }
  } finally {
    dir[Symbol.dispose]();
  }
});

test('wildmatch follows git\'s rules for *, **, ?, classes and escapes', () => {
  const cases: [string, string, boolean, boolean?][] = [
    ['foo', 'foo', true], ['foo', 'bar', false], ['*', 'abc', true], ['*', 'a/b', false],
    ['a?c', 'abc', true], ['a?c', 'a/c', false], ['foo/**/bar', 'foo/bar', true], ['foo/**/bar', 'foo/a/b/bar', true],
    ['**/foo', 'foo', true], ['**/foo', 'a/b/foo', true], ['foo/**', 'foo/a/b', true], ['foo/**', 'foo', false],
    ['foo*bar', 'foo/bar', false], ['foo*bar', 'fooxbar', true], ['*/bar', 'foo/bar', true], ['*/bar', 'a/foo/bar', false],
    ['[a-c]x', 'bx', true], ['[!a-c]x', 'bx', false], ['[^a-c]x', 'dx', true], ['[[:digit:]]z', '5z', true], ['[[:alpha:]]', '5', false],
    ['\\*', '*', true], ['\\*', 'x', false], ['FOO', 'foo', false], ['FOO', 'foo', true, true], ['[A-Z]x', 'bx', true, true],
    ['a**b', 'axxb', true], ['a**b', 'a/b', false], ['[a/]b', '/b', false], ['*.c', 'dir/x.c', false], ['**/*.c', 'dir/x.c', true],
  ];
  for (const [pattern, text, expected, caseFold] of cases) {
    assert.equal(wildmatch(pattern, text, { pathname: true, caseFold: caseFold === true }), expected, `${pattern} ~ ${text}`);
  }
});

test('an include of an empty or bare path is skipped as git skips it (found by the fuzzer: seed -91683578)', () => {
  const dir = tempDir();
  try {
    for (const [i, text] of ['[include]path=\n[a]\nb=1\n', '[include]path\n[a]\nb=1\n', '[include]\n\tpath = .\n[a]\nb=2\n'].entries()) {
      const file = join(dir.path, `config-${i}`);
      writeFileSync(file, text);
      assert.equal(listOf(GitConfig.read(file)), gitConfig(dir.path, ['-f', file, '--list']), JSON.stringify(text));
    }
  } finally {
    dir[Symbol.dispose]();
  }
});

test('configFromEnvironment reads what git passes its children: GIT_CONFIG_PARAMETERS as git 2.39 writes it, and GIT_CONFIG_COUNT pairs', () => {
  using dir = tempDir();
  // git's own encoding, from a child it runs (an alias) with -c settings of every shape. Without
  // the GIT_CONFIG_COUNT pairs npm test gives every git (scripts/test.mjs), which git would pass on too.
  const own = Object.fromEntries(Object.entries(GIT_ENV).filter(([k]) => !k.startsWith('GIT_CONFIG_COUNT') && !k.startsWith('GIT_CONFIG_KEY_') && !k.startsWith('GIT_CONFIG_VALUE_')));
  const env = execGit([
    '-c', 'pack.preferBitmapTips=refs/tags/include', '-c', "x.y=it's", '-c', 'core.bare', '-c', 'url.https://a/b.insteadOf=g:', '-c', 'e.v=',
    '-c', 'alias.penv=!printf %s "$GIT_CONFIG_PARAMETERS"', 'penv',
  ], { cwd: dir.path, env: own }).toString();
  const pairs = configFromEnvironment({ GIT_CONFIG_PARAMETERS: env }).slice(0, 5);
  assert.deepEqual(pairs, [
    { key: 'pack.preferBitmapTips', value: 'refs/tags/include' },
    { key: 'x.y', value: "it's" },
    { key: 'core.bare', value: null },
    { key: 'url.https://a/b.insteadOf', value: 'g:' },
    { key: 'e.v', value: '' },
  ]);
  assert.deepEqual(configFromEnvironment({ GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'a.b', GIT_CONFIG_VALUE_0: '1', GIT_CONFIG_KEY_1: 'c.d', GIT_CONFIG_VALUE_1: 'x y' }), [
    { key: 'a.b', value: '1' },
    { key: 'c.d', value: 'x y' },
  ]);
  // What git refuses, refused in its words; git fails on each too.
  for (const [env, message] of [
    [{ GIT_CONFIG_PARAMETERS: "'a.b" }, /bogus format in GIT_CONFIG_PARAMETERS/],
    [{ GIT_CONFIG_PARAMETERS: "'a.b'x" }, /bogus format in GIT_CONFIG_PARAMETERS/],
    [{ GIT_CONFIG_PARAMETERS: "'a.b'='c'd" }, /bogus format in GIT_CONFIG_PARAMETERS/],
    [{ GIT_CONFIG_COUNT: 'x' }, /bogus count in GIT_CONFIG_COUNT/],
    [{ GIT_CONFIG_COUNT: '1' }, /missing config key GIT_CONFIG_KEY_0/],
    [{ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'a.b' }, /missing config value GIT_CONFIG_VALUE_0/],
  ] as const) {
    assert.throws(() => configFromEnvironment(env), (e: unknown) => isPackwrightError(e, 'CONFIG_INVALID') && message.test((e as Error).message));
    assert.notEqual(spawnGit(['config', '--list'], { cwd: dir.path, env: { ...own, ...env } }).status, 0, JSON.stringify(env));
  }
});

test('color values turn into the escapes git config --get-color gives; a word git refuses is CONFIG_INVALID; color.<slot> and color.ui decide as git\'s colorbool', () => {
  using dir = tempDir();
  const values = ['red', 'bold red', 'red blue', 'brightgreen', 'brightblue black', 'reverse bold ul blink dim italic strike', 'nobold no-ul noitalic', 'normal red', 'default', 'normal default',
    '123', '-1 17', '7', '#ff0088', '#00ff00 #0000ff bold', 'reset', 'Reset', '', 'RED bold', 'BrightRed', '#FF0088', ' red  ', 'yellow nostrike noreverse noblink nodim'];
  for (const value of values) {
    const theirs = execGit(['config', '--get-color', '', value], { cwd: dir.path, env: GIT_ENV }).toString('latin1');
    assert.equal(JSON.stringify(parseColor(value)), JSON.stringify(theirs), `'${value}'`);
  }
  for (const bad of ['purple', 'red green blue', 'boldest', 'bright blue', 'Bold red', 'nO-bold']) {
    assert.notEqual(spawnGit(['config', '--get-color', '', bad], { cwd: dir.path, env: GIT_ENV }).status, 0, bad);
    assert.throws(() => parseColor(bad), (e) => isPackwrightError(e, 'CONFIG_INVALID'), bad);
  }
  const config = (pairs: [string, string | null][]): GitConfig => {
    const c = new GitConfig();
    for (const [k, v] of pairs) c.addPair(k, v);
    return c;
  };
  const cases: [[string, string | null][], boolean, boolean][] = [
    [[], false, true], [[['color.push', 'always']], true, true], [[['color.push', 'never']], false, false], [[['color.push', 'true']], false, true],
    [[['color.push', null]], false, true], [[['color.ui', 'always']], true, true], [[['color.ui', 'always'], ['color.push', 'false']], false, false], [[['color.ui', 'never'], ['color.push', 'auto']], false, true],
  ];
  for (const [pairs, notTty, tty] of cases) {
    assert.equal(wantColor(config(pairs), 'color.push', false, {}), notTty, JSON.stringify(pairs));
    assert.equal(wantColor(config(pairs), 'color.push', true, { TERM: 'xterm' }), tty, JSON.stringify(pairs));
  }
  assert.equal(wantColor(config([]), 'color.push', true, { TERM: 'dumb' }), false);
});
