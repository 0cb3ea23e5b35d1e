#!/usr/bin/env node
// npm run git-tests -- GITSRC [script ...] [--list] [--jobs=N] [--keep]
//
// Runs git's own test scripts (t/ of a built git source tree, v2.39.5 to match the git here) with
// packwright standing in for the commands it implements, and prints a table: script, the commands
// packwright stood in for, failed/tests, and the names of the failing tests. Every `git <cmd>` a
// script runs itself goes to packwright for the listed commands; git's internal children (fetch
// running index-pack, say) stay git's. The stand-in is a wrapper in GITSRC/bin-wrappers/git,
// restored when the run ends (or by hand: cp bin-wrappers/git.real bin-wrappers/git). A group marked
// `internal` stands in for git's internal children too (git repack running pack-objects): its
// bin-wrappers/git points GIT_EXEC_PATH at GITSRC/packwright-exec, a copy of the exec path whose
// `git` sends the group's commands to packwright.
//
// Build git once (about 5 minutes on 2 cores):
//   git clone --branch v2.39.5 --depth 1 https://github.com/git/git GITSRC
//   make -C GITSRC -j2 NO_CURL=1 NO_EXPAT=1 NO_GETTEXT=1 NO_TCLTK=1 NO_PERL=1 NO_PYTHON=1
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = resolve(here, '..', 'dist', 'bin', 'packwright.cjs');

// Which commands stand in for which scripts. t5316 keeps git's index-pack: it checks the trace2
// progress regions git's index-pack writes (GIT_TRACE2_EVENT), which packwright does not.
const PLUMBING = 'cat-file index-pack verify-pack';
const GROUPS = [
  { commands: PLUMBING, scripts: ['t1006-cat-file.sh', 't5300-pack-object.sh', 't5302-pack-index.sh', 't5325-reverse-index.sh', 't1050-large.sh'] },
  // Damaged packs (issue 10's corpus): what fails, and what is read from another copy.
  { commands: PLUMBING, scripts: ['t5303-pack-corruption-resilience.sh', 't5309-pack-delta-cycles.sh', 't5313-pack-bounds-checks.sh'] },
  { commands: 'multi-pack-index', scripts: ['t5319-multi-pack-index.sh', 't5326-multi-pack-bitmaps.sh', 't5327-multi-pack-bitmaps-rev.sh'] },
  { commands: 'pack-objects', scripts: ['t5300-pack-object.sh', 't5315-pack-objects-compression.sh', 't5316-pack-delta-depth.sh'] },
  // git repack and git gc run pack-objects themselves (-a, -A with --unpack-unreachable, -k,
  // --geometric with --stdin-packs, --cruft, --exclude-promisor-objects in a partial clone), as
  // prune, upload-pack (t5700, t5530, t5616) and the tests' own calls do; repack -b gets its
  // bitmaps from packwright (t7700, t0410); t5616's "repack does not loosen promisor objects"
  // reads packwright's trace2 (GIT_TRACE2_PERF).
  {
    commands: 'pack-objects',
    internal: true,
    scripts: [
      't7700-repack.sh', 't7701-repack-unpack-unreachable.sh', 't7702-repack-cyclic-alternate.sh', 't7703-repack-geometric.sh', 't6500-gc.sh',
      't5304-prune.sh', 't5305-include-tag.sh', 't5306-pack-nobase.sh', 't5307-pack-missing-commit.sh', 't5314-pack-cycle-detection.sh',
      't5317-pack-objects-filter-objects.sh', 't5321-pack-large-objects.sh', 't5322-pack-objects-sparse.sh', 't5329-pack-objects-cruft.sh', 't0410-partial-clone.sh', 't5616-partial-clone.sh', 't5700-protocol-v1.sh', 't5530-upload-pack-error.sh',
    ],
  },
  // fetch, clone and receive-pack run index-pack (--stdin --fix-thin --pack_header
  // --check-self-contained-and-connected ...) or unpack-objects on what they receive.
  { commands: 'index-pack unpack-objects', internal: true, scripts: ['t5500-fetch-pack.sh', 't5601-clone.sh', 't5510-fetch.sh', 't5504-fetch-receive-strict.sh', 't5516-fetch-push.sh'] },
  // git's fetch and clone run upload-pack (git-upload-pack over file://, and git daemon runs it
  // for git://). Known failure: t5616's check of the pack-objects command line git's upload-pack
  // spawns (GIT_TRACE).
  {
    commands: 'upload-pack',
    internal: true,
    scripts: ['t5500-fetch-pack.sh', 't5700-protocol-v1.sh', 't5702-protocol-v2.sh', 't5703-upload-pack-ref-in-want.sh', 't5704-protocol-violations.sh', 't5530-upload-pack-error.sh', 't5537-fetch-shallow.sh', 't5601-clone.sh', 't5616-partial-clone.sh', 't5555-http-smart-common.sh', 't5544-pack-objects-hook.sh', 't5509-fetch-push-namespaces.sh', 't5570-git-daemon.sh'],
  },
  // Over HTTP: apache runs git-http-backend (packwright's here), which serves upload-pack itself.
  // They need git built with curl (drop NO_CURL=1 above; Debian's libcurl4-openssl-dev) and
  // Debian's apache2; without them they skip.
  {
    commands: 'upload-pack http-backend',
    internal: true,
    httpd: true,
    scripts: ['t5551-http-fetch-smart.sh', 't5539-fetch-http-shallow.sh', 't5561-http-backend.sh', 't5562-http-backend-content-length.sh'],
  },
  // git's push runs receive-pack (git-receive-pack over file:// and ssh; git daemon runs it for
  // git://), and receive-pack's children (index-pack, unpack-objects) are packwright's in it too.
  {
    commands: 'receive-pack index-pack unpack-objects update-ref symbolic-ref',
    internal: true,
    scripts: ['t5570-git-daemon.sh', 't5700-protocol-v1.sh', 't5516-fetch-push.sh', 't5400-send-pack.sh', 't5401-update-hooks.sh', 't5405-send-pack-rewind.sh', 't5406-remote-rejects.sh', 't5409-colorize-remote-messages.sh', 't5410-receive-pack-alternates.sh', 't5504-fetch-receive-strict.sh', 't5543-atomic-push.sh', 't5545-push-options.sh', 't5546-receive-limits.sh', 't5547-push-quarantine.sh', 't5548-push-porcelain.sh', 't1400-update-ref.sh', 't5537-fetch-shallow.sh', 't5509-fetch-push-namespaces.sh', 't5411-proc-receive-hook.sh'],
  },
  // Pushes over HTTP: apache runs packwright's http-backend, which runs receive-pack itself.
  {
    commands: 'receive-pack upload-pack http-backend index-pack unpack-objects',
    internal: true,
    httpd: true,
    scripts: ['t5541-http-push-smart.sh', 't5545-push-options.sh', 't5548-push-porcelain.sh', 't5562-http-backend-content-length.sh'],
  },
  // The scripts' own fetch and push (the client, issue 41); git's pull still runs git's fetch.
  // Known failures: t5516's "push with config push.useBitmaps" and t5514's "parallel" read the
  // trace2/GIT_TRACE lines of a pack-objects or parallel fetch children git would spawn, which
  // packwright runs in its own process. Over HTTP (run as a user other than root): t5551's dumb
  // HTTP (GIT_SMART_HTTP=0), which the client does not speak, and t5541's signed pushes
  // (certificates).
  { commands: 'fetch push', scripts: ['t5510-fetch.sh', 't5516-fetch-push.sh', 't5543-atomic-push.sh', 't5533-push-cas.sh', 't5514-fetch-multiple.sh', 't5537-fetch-shallow.sh', 't5502-quickfetch.sh', 't5503-tagfollow.sh', 't5513-fetch-track.sh', 't5517-push-mirror.sh', 't5518-fetch-exit-status.sh', 't5523-push-upstream.sh', 't5525-fetch-tagopt.sh', 't5527-fetch-odd-refs.sh', 't5528-push-default.sh', 't5529-push-errors.sh', 't5535-fetch-push-symref.sh', 't5536-fetch-conflicts.sh', 't5538-push-shallow.sh', 't5552-skipping-fetch-negotiator.sh', 't5554-noop-fetch-negotiator.sh', 't5571-pre-push-hook.sh', 't5582-fetch-negative-refspec.sh', 't5501-fetch-push-alternates.sh', 't5519-push-alternates.sh', 't5515-fetch-merge-logic.sh', 't5506-remote-groups.sh', 't5511-refspec.sh', 't5551-http-fetch-smart.sh', 't5541-http-push-smart.sh', 't5539-fetch-http-shallow.sh', 't5542-push-http-shallow.sh', 't5549-fetch-push-http.sh', 't5505-remote.sh', 't5581-http-curl-verbose.sh', 't5812-proto-disable-http.sh', 't5810-proto-disable-local.sh', 't5811-proto-disable-git.sh', 't5813-proto-disable-ssh.sh'] },
  // Known failures in t6112: three read GIT_TRACE's "Skipping contents of tree", two the name an
  // object printed under tree:<depth> (git's: the path where it was kept; packwright's: the first
  // path where it was listed).
  { commands: 'rev-list', scripts: ['t6005-rev-list-count.sh', 't6009-rev-list-parent.sh', 't6000-rev-list-misc.sh', 't6004-rev-list-path-optim.sh', 't6112-rev-list-filters-objects.sh'] },
  // Reading reachability bitmaps (git's repack and multi-pack-index write them): the script's own
  // rev-list --use-bitmap-index and --test-bitmap, and pack-objects calls. Known failures: t5327's
  // "reverse index exists (rev)" (6): under GIT_TEST_MIDX_READ_RIDX=0, git's knob to read the .rev
  // file, packwright still reads the RIDX chunk, and its trace2 says "midx".
  { commands: 'rev-list pack-objects', scripts: ['t5310-pack-bitmaps.sh', 't5326-multi-pack-bitmaps.sh', 't5327-multi-pack-bitmaps-rev.sh'] },
  // Bitmaps written by packwright's pack-objects under git's repack -b (and read by both); t5310's
  // "full repack creates bitmaps" reads the trace's num_selected_commits and num_maximal_commits.
  { commands: 'pack-objects', internal: true, scripts: ['t5310-pack-bitmaps.sh', 't5326-multi-pack-bitmaps.sh', 't5327-multi-pack-bitmaps-rev.sh'] },
  { commands: 'fsck', scripts: ['t1450-fsck.sh', 't5318-commit-graph.sh'] },
  // The scripts' own commit-graph write and verify (git's gc, fetch and repack still write theirs).
  // Known failures: t4216's seven tests of git's trace2 statistics (GIT_TRACE2_EVENT), which packwright does not write.
  { commands: 'commit-graph', scripts: ['t5318-commit-graph.sh', 't5324-split-commit-graph.sh', 't4216-log-bloom.sh', 't6600-test-reach.sh'] },
  // Walks reading the graph packwright or git wrote.
  { commands: 'rev-list', scripts: ['t5318-commit-graph.sh', 't5324-split-commit-graph.sh'] },
  { commands: 'hash-object', scripts: ['t1007-hash-object.sh'] },
  { commands: 'unpack-objects', scripts: ['t5300-pack-object.sh'] },
  { commands: 'ls-tree', scripts: ['t3100-ls-tree-restrict.sh', 't3101-ls-tree-dirname.sh', 't3104-ls-tree-format.sh'] },
  { commands: 'rev-parse', scripts: ['t1500-rev-parse.sh', 't1503-rev-parse-verify.sh', 't1501-work-tree.sh', 't1506-rev-parse-diagnosis.sh'] },
  { commands: 'show-ref', scripts: ['t1403-show-ref.sh'] },
  { commands: 'update-ref', scripts: ['t1400-update-ref.sh', 't1404-update-ref-errors.sh', 't1416-ref-transaction-hooks.sh', 't1430-bad-ref-name.sh', 't1417-reflog-updateref.sh', 't1418-reflog-exists.sh', 't1410-reflog.sh', 't1413-reflog-detach.sh'] },
  { commands: 'symbolic-ref', scripts: ['t1401-symbolic-ref.sh'] },
  { commands: 'ls-remote', scripts: ['t5512-ls-remote.sh'] },
  { commands: 'update-server-info', scripts: ['t5200-update-server-info.sh'] },
  { commands: 'count-objects', scripts: ['t5301-sliding-window.sh'] },
];

const args = process.argv.slice(2);
const flags = args.filter((a) => a.startsWith('--'));
const positional = args.filter((a) => !a.startsWith('--'));
const src = positional[0];
if (src === undefined) {
  console.error('usage: npm run git-tests -- GITSRC [script ...] [--list] [--jobs=N]\n(GITSRC: git v2.39.5 source, built; see the comment at the top of scripts/git-tests.mjs)');
  process.exit(2);
}
const wrappers = join(src, 'bin-wrappers');
if (!existsSync(join(wrappers, 'git')) || !existsSync(join(src, 't', 'test-lib.sh'))) {
  console.error(`${src}: not a built git source tree (no bin-wrappers/git or t/test-lib.sh); build it first (see scripts/git-tests.mjs)`);
  process.exit(2);
}
if (!existsSync(CLI)) {
  console.error(`${CLI} is missing: run npm run build first`);
  process.exit(2);
}
const only = new Set(positional.slice(1));
const jobs = Number(flags.find((f) => f.startsWith('--jobs='))?.slice(7) ?? 2);
const list = flags.includes('--list');

/** The wrapper run.sh writes: the subcommand is the first argument that is not an option (or an option's value). */
function wrapperText(commands) {
  return `#!/bin/sh
skip=; sub=
for a in "$@"; do
  if [ -n "$skip" ]; then skip=; continue; fi
  case "$a" in
    -C|-c|--git-dir|--work-tree|--namespace|--exec-path|--super-prefix) skip=1 ;;
    -*) ;;
    *) sub=$a; break ;;
  esac
done
for c in ${commands}; do [ "$sub" = "$c" ] && exec "${process.execPath}" "${CLI}" "$@"; done
exec "${join(wrappers, 'git.real')}" "$@"
`;
}

/**
 * For an `internal` group: GITSRC/packwright-exec, every entry of the exec path (GITSRC) linked,
 * but `git`, which dispatches like wrapperText to packwright or GITSRC/git; and the text of a
 * bin-wrappers/git that uses it as GIT_EXEC_PATH.
 */
function internalWrapperText(commands) {
  const exec = join(src, 'packwright-exec');
  rmSync(exec, { recursive: true, force: true });
  mkdirSync(exec);
  // The dashed forms (git-upload-pack, which fetch runs over file:// and ssh) start packwright too.
  const dashed = new Set(commands.split(' ').map((c) => `git-${c}`));
  for (const name of readdirSync(src)) if (name !== 'git' && name !== 'packwright-exec' && !dashed.has(name)) symlinkSync(join(src, name), join(exec, name));
  writeFileSync(join(exec, 'git'), wrapperText(commands).replace(join(wrappers, 'git.real'), join(src, 'git')));
  chmodSync(join(exec, 'git'), 0o755);
  for (const name of dashed) {
    writeFileSync(join(exec, name), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" ${name.slice(4)} "$@"\n`);
    chmodSync(join(exec, name), 0o755);
  }
  return readFileSync(realGit, 'utf8').replace(/^GIT_EXEC_PATH='[^']*'$/m, `GIT_EXEC_PATH='${exec}'`);
}

/**
 * For a group that runs apache (`httpd`): the scripts' environment, with LIB_HTTPD_PATH naming a
 * wrapper of apache2 that points the GIT_EXEC_PATH of its CGI programs (git-http-backend) at
 * GITSRC/packwright-exec. apache refuses to run the scripts as root: run these as another user
 * (who owns GITSRC).
 */
function httpdEnvironment() {
  const wrapper = join(src, 'packwright-exec', 'apache2');
  writeFileSync(wrapper, `#!/bin/sh\nGIT_EXEC_PATH='${join(src, 'packwright-exec')}' exec /usr/sbin/apache2 "$@"\n`);
  chmodSync(wrapper, 0o755);
  return { ...process.env, LIB_HTTPD_PATH: wrapper };
}

/** Runs one script; resolves to its counts and the names of its failing tests. */
function runScript(script, env = process.env) {
  return new Promise((done) => {
    const child = spawn('sh', [script], { cwd: join(src, 't'), env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', () => {
      const failing = [...out.matchAll(/^not ok \d+ - (.*)$/gm)].map((m) => m[1]).filter((name) => !/# TODO/.test(name));
      const passed = /^# passed all (\d+) test/m.exec(out);
      // "among remaining N" when the script also had known breakages (still there, or vanished).
      const failed = /^# failed (\d+) among (?:remaining )?(\d+) test/m.exec(out);
      const remaining = /^# passed all remaining (\d+) test/m.exec(out);
      const broken = /^# still have (\d+) known breakage/m.exec(out);
      // A script that skips itself whole (apache as root, git built without curl): "1..0 # SKIP <why>".
      const skipped = /^1\.\.0 # SKIP (.*)$/m.exec(out);
      if (skipped) {
        done({ script, fails: 0, tests: 0, failing: [], known: 0, skipped: skipped[1] });
        return;
      }
      let fails = 0;
      let tests = 0;
      if (failed) [fails, tests] = [Number(failed[1]), Number(failed[2])];
      else if (passed) tests = Number(passed[1]);
      else if (remaining) tests = Number(remaining[1]) + Number(broken?.[1] ?? 0);
      else fails = tests = -1;
      done({ script, fails, tests, failing, known: Number(broken?.[1] ?? 0) });
    });
  });
}

const realGit = join(wrappers, 'git.real');
if (!existsSync(realGit)) copyFileSync(join(wrappers, 'git'), realGit);
const restore = () => copyFileSync(realGit, join(wrappers, 'git'));
process.on('SIGINT', () => {
  restore();
  process.exit(130);
});

const rows = [];
try {
  for (const group of GROUPS) {
    const scripts = group.scripts.filter((s) => only.size === 0 || only.has(s) || only.has(s.replace(/-.*$/, '')));
    if (scripts.length === 0) continue;
    writeFileSync(join(wrappers, 'git'), group.internal === true ? internalWrapperText(group.commands) : wrapperText(group.commands));
    chmodSync(join(wrappers, 'git'), 0o755);
    // Scripts run side by side: each works in its own trash directory.
    const queue = [...scripts];
    const workers = Array.from({ length: Math.max(1, jobs) }, async () => {
      for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
        const r = await runScript(s, group.httpd === true ? httpdEnvironment() : process.env);
        rows.push({ ...r, commands: group.commands, group: GROUPS.indexOf(group) });
        const status = r.skipped !== undefined ? `skipped: ${r.skipped}` : r.tests < 0 ? 'did not finish' : `${r.fails} / ${r.tests} failed${r.known > 0 ? ` (${r.known} known breakage${r.known > 1 ? 's' : ''} as in git)` : ''}`;
        process.stderr.write(`${s} [${group.commands}]: ${status}\n`);
      }
    });
    await Promise.all(workers);
  }
} finally {
  // --keep leaves the last group's stand-in in place, to run one of its scripts by hand with -v -i
  // (restore it then: cp bin-wrappers/git.real bin-wrappers/git).
  if (!flags.includes('--keep')) restore();
}

// In the order of GROUPS, whatever order the scripts finished in.
const position = (r) => r.group * 100 + GROUPS[r.group].scripts.indexOf(r.script);
rows.sort((a, b) => position(a) - position(b));
const width = Math.max(...rows.map((r) => r.script.length), 6);
const cwidth = Math.max(...rows.map((r) => r.commands.length), 8);
console.log(`| ${'script'.padEnd(width)} | ${'stand-in'.padEnd(cwidth)} | failed / tests |`);
console.log(`|${'-'.repeat(width + 2)}|${'-'.repeat(cwidth + 2)}|----------------|`);
let failures = 0;
for (const r of rows) {
  const cell = r.skipped !== undefined ? 'skipped' : r.tests < 0 ? 'did not finish' : `${r.fails} / ${r.tests}`;
  console.log(`| ${r.script.padEnd(width)} | ${r.commands.padEnd(cwidth)} | ${cell.padEnd(14)} |`);
  if (r.fails !== 0) failures++;
  if (list) for (const name of r.failing) console.log(`|   not ok: ${name}`);
  if (list && r.skipped !== undefined) console.log(`|   skipped: ${r.skipped}`);
}
process.exitCode = failures > 0 ? 1 : 0;
