// git's trace2 (api-trace2.txt): the event target (GIT_TRACE2_EVENT, one JSON object a line) and
// the performance target (GIT_TRACE2_PERF, `|`-separated columns), the events tools and git's
// own tests read: version, start, cmd_name, exit and atexit around a command, and the regions and
// data the code reports on the way (the same categories, labels and keys git uses). Each target
// is a file appended to (a directory gets a file per process, named after its session id), a
// descriptor (`1`..`9`, `true` for stderr). When neither variable is set every call returns at
// once: library code calls trace2Data and trace2Region freely.
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** One destination: its format, descriptor, and the settings that shape what goes there. */
interface Target {
  format: 'event' | 'perf';
  fd: number;
  /** Opened here (closed at the end), not a descriptor the process was given. */
  owned: boolean;
  /** GIT_TRACE2_EVENT_BRIEF / GIT_TRACE2_PERF_BRIEF: no time, file or line. */
  brief: boolean;
}

/** A command's trace: its targets, session id, start time and open regions. */
interface Session {
  targets: Target[];
  sid: string;
  /** performance.now() at the start. */
  start: number;
  /** GIT_TRACE2_EVENT_NESTING (2 by default): deeper regions and their data are not written to the event target. */
  maxNesting: number;
  regions: { category: string; label: string; start: number }[];
}

let current: Session | undefined;

/** A target named by an environment variable's value, or undefined when it names none packwright can write to. */
function openTarget(value: string | undefined, format: Target['format'], brief: boolean, sid: string): Target | undefined {
  if (value === undefined || value === '' || /^(0|false|no|off)$/i.test(value)) return undefined;
  if (/^(1|true|yes|on)$/i.test(value)) return { format, fd: 2, owned: false, brief };
  if (/^[2-9]$/.test(value)) return { format, fd: Number(value), owned: false, brief };
  if (!value.startsWith('/')) return undefined; // git's af_unix: sockets are not written to
  try {
    let path = value;
    if (statSync(value, { throwIfNoEntry: false })?.isDirectory() === true) path = join(value, sid.replace(/\//g, '_'));
    return { format, fd: openSync(path, 'a'), owned: true, brief };
  } catch {
    return undefined;
  }
}

/** git's session id: the parent's (a child of git or packwright) then this process's own part. */
function sessionId(env: Readonly<Record<string, string | undefined>>): string {
  const now = new Date();
  const stamp = `${now.toISOString().replace(/[-:]/g, '').replace(/\.(\d{3})Z$/, '.$1000Z')}`;
  let host = 0;
  for (const c of hostname()) host = (Math.imul(host, 31) + c.charCodeAt(0)) >>> 0;
  const own = `${stamp}-H${host.toString(16).padStart(8, '0')}-P${process.pid.toString(16).padStart(8, '0')}`;
  const parent = env['GIT_TRACE2_PARENT_SID'];
  return parent !== undefined && parent !== '' ? `${parent}/${own}` : own;
}

/** Milliseconds as the seconds trace2 writes: six decimals. */
function seconds(ms: number): number {
  return Number((ms / 1000).toFixed(6));
}

/** UTC time as trace2 writes it: `2026-12-05T21:00:00.123456Z`. */
function utcTime(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function write(session: Session, event: string, fields: Record<string, unknown>, perfColumns: { category?: string; message: string; tRel?: number }): void {
  const nesting = session.regions.length;
  const tAbs = seconds(performance.now() - session.start);
  for (const target of session.targets) {
    let line: string;
    if (target.format === 'event') {
      const head: Record<string, unknown> = { event, sid: session.sid, thread: 'main' };
      if (!target.brief || event === 'version' || event === 'atexit') head['time'] = utcTime();
      line = `${JSON.stringify({ ...head, ...fields })}\n`;
    } else {
      const time = target.brief ? '' : `${utcTime().slice(11, 26)} packwright:0`.padEnd(40);
      const cols = [`d0`, 'main'.padEnd(24), event.padEnd(12), '   ', tAbs.toFixed(6).padStart(9), perfColumns.tRel !== undefined ? perfColumns.tRel.toFixed(6).padStart(9) : ' '.repeat(9), (perfColumns.category ?? '').padEnd(12)];
      line = `${time}| ${cols.join(' | ')} | ${'.'.repeat(nesting)}${perfColumns.message}\n`;
    }
    try {
      writeSync(target.fd, line);
    } catch {
      // A target that cannot be written to is dropped, as git disables it.
      session.targets = session.targets.filter((t) => t !== target);
    }
  }
}

/**
 * Starts tracing a command as git's trace2 does, when GIT_TRACE2_EVENT or GIT_TRACE2_PERF says
 * where: `version`, `start` and `cmd_name` are written; call the returned function with the exit
 * code at the end (`exit` and `atexit`). Undefined when nothing is traced.
 */
export function startTrace2(env: Readonly<Record<string, string | undefined>>, argv: readonly string[], commandName: () => string | undefined, version: () => string): ((code: number) => void) | undefined {
  const event = env['GIT_TRACE2_EVENT'];
  const perf = env['GIT_TRACE2_PERF'];
  if ((event === undefined || event === '') && (perf === undefined || perf === '')) return undefined;
  const sid = sessionId(env);
  const brief = (name: string): boolean => /^(1|true|yes|on)$/i.test(env[name] ?? '');
  const targets = [openTarget(event, 'event', brief('GIT_TRACE2_EVENT_BRIEF'), sid), openTarget(perf, 'perf', brief('GIT_TRACE2_PERF_BRIEF'), sid)].filter((t): t is Target => t !== undefined);
  if (targets.length === 0) return undefined;
  const nesting = Number(env['GIT_TRACE2_EVENT_NESTING']);
  const session: Session = { targets, sid, start: performance.now(), maxNesting: Number.isInteger(nesting) && nesting > 0 ? nesting : 2, regions: [] };
  const previous = current;
  current = session;
  const exe = version();
  write(session, 'version', { evt: '3', exe }, { message: exe });
  const args = ['packwright', ...argv];
  write(session, 'start', { t_abs: 0, argv: args }, { message: args.join(' ') });
  const command = commandName();
  if (command !== undefined) write(session, 'cmd_name', { name: command, hierarchy: command }, { message: `${command} (${command})` });
  return (code) => {
    const tAbs = seconds(performance.now() - session.start);
    write(session, 'exit', { t_abs: tAbs, code }, { message: `code:${code}` });
    write(session, 'atexit', { t_abs: tAbs, code }, { message: `code:${code}` });
    for (const t of session.targets) if (t.owned) closeSync(t.fd);
    current = previous;
  };
}

/** Whether a trace is being written: for data that costs something to compute. */
export function trace2Active(): boolean {
  return current !== undefined;
}

/** A `data` event: `key` = `value` in `category` (git's trace2_data_string and trace2_data_intmax). */
export function trace2Data(category: string, key: string, value: string | number): void {
  const session = current;
  if (session === undefined || session.regions.length > session.maxNesting) return;
  const region = session.regions[session.regions.length - 1];
  const tRel = seconds(performance.now() - (region !== undefined ? region.start : session.start));
  write(session, 'data', { t_abs: seconds(performance.now() - session.start), t_rel: tRel, nesting: session.regions.length, category, key, value: String(value) }, { category, message: `${key}:${value}`, tRel });
}

/** Runs `fn` inside a region (git's trace2_region_enter and trace2_region_leave). */
export function trace2Region<T>(category: string, label: string, fn: () => T): T {
  const session = current;
  if (session === undefined) return fn();
  if (session.regions.length <= session.maxNesting) write(session, 'region_enter', { nesting: session.regions.length, category, label }, { category, message: `label:${label}` });
  const region = { category, label, start: performance.now() };
  session.regions.push(region);
  try {
    return fn();
  } finally {
    session.regions.pop();
    const tRel = seconds(performance.now() - region.start);
    if (session.regions.length <= session.maxNesting) write(session, 'region_leave', { t_rel: tRel, nesting: session.regions.length, category, label }, { category, message: `label:${label}`, tRel });
  }
}
