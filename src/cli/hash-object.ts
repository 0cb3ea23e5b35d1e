import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { PackwrightError } from '../errors/index.js';
import { hashLiterally, hashObject, toHex, type ObjectFormat } from '../hash/index.js';
import { OBJ_BLOB, typeNumber } from '../objects/index.js';
import { objectFormatError } from '../fsck/index.js';
import { Attributes, convertToGit, type Repository } from '../repo/index.js';
import { tryOpenRepository, type GlobalOptions } from './global-options.js';
import { readAll, readLines } from './read-lines.js';
import { UsageError } from './usage-error.js';
import type { CommandIO } from './command-io.js';

const USAGE = `usage: packwright hash-object [-t <type>] [-w] [--path=<file> | --no-filters] [--collision-detection]
                              [--stdin [--literally]] [--] <file>...
   or: packwright hash-object [-t <type>] [-w] --stdin-paths [--no-filters]`;

/**
 * `git hash-object`: the id of each file (or stdin, or each path read from stdin) as an object of
 * `-t <type>` (blob by default), written as a loose object with `-w`. Trees, commits and tags must
 * parse as git's would unless `--literally`, which also takes any type name. A blob named by a path
 * in a work tree (the file, or `--path`) is converted as git stores it (CRLF and ident by
 * gitattributes and core.autocrlf; not external filter drivers) unless `--no-filters`.
 */
export function hashObjectCommand(io: CommandIO, global: GlobalOptions, args: string[]): number {
  let type = 'blob';
  let write = false;
  let stdin = 0;
  let stdinPaths = false;
  let noFilters = false;
  let literally = false;
  let detectCollisions = false;
  let path: string | undefined;
  const files: string[] = [];
  let options = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (!options || !a.startsWith('-') || a === '-') files.push(a);
    else if (a === '--') options = false;
    else if (a === '-h' || a === '--help') { io.stdout.write(`${USAGE}\n`); return a === '-h' ? 129 : 0; }
    else if (a === '-t') type = args[++i] ?? usage(`error: switch \`t' requires a value`);
    else if (a.startsWith('-t')) type = a.slice(2);
    else if (a === '-w') write = true;
    else if (a === '--stdin') stdin++;
    else if (a === '--stdin-paths') stdinPaths = true;
    else if (a === '--no-filters') noFilters = true;
    else if (a === '--literally') literally = true;
    else if (a === '--collision-detection') detectCollisions = true;
    else if (a === '--path') path = args[++i] ?? usage(`error: option \`path' requires a value`);
    else if (a.startsWith('--path=')) path = a.slice(7);
    else usage(`error: unknown option \`${a.replace(/^--?/, '')}'`);
  }
  let problem: string | undefined;
  if (stdinPaths) {
    if (stdin > 0) problem = "Can't use --stdin-paths with --stdin";
    else if (files.length > 0) problem = "Can't specify files with --stdin-paths";
    else if (path !== undefined) problem = "Can't use --stdin-paths with --path";
  } else {
    if (stdin > 1) problem = 'Multiple --stdin arguments are not supported';
    if (path !== undefined && noFilters) problem = "Can't use --path with --no-filters";
  }
  if (problem !== undefined) usage(`error: ${problem}`);
  // Writing needs a repository; hashing takes its object format when there is one.
  const repo: Repository | undefined = tryOpenRepository(global);
  if (write && repo === undefined) throw new PackwrightError('REPO_NOT_FOUND', 'not a git repository (or any of the parent directories): .git');
  const format: ObjectFormat = repo?.format ?? 'sha1';
  const typeNo = typeNumber(type);
  if (!literally && typeNo < 0) throw new PackwrightError('INVALID_ARGUMENT', `invalid object type "${type}"`);
  const hashLen = format === 'sha1' ? 20 : 32;
  const out: string[] = [];
  const flush = (): void => {
    if (out.length > 0) io.stdout.write(out.join(''));
    out.length = 0;
  };
  // Attribute-driven conversion (CRLF, ident) for blobs hashed under a path in a work tree.
  const attributes = repo?.workTree !== undefined ? new Attributes(repo.workTree, repo.gitDir, repo.config, repo.env) : undefined;
  const filtered = (data: Buffer, vpath: string | undefined): Buffer => {
    if (vpath === undefined || noFilters || literally || typeNo !== OBJ_BLOB || repo === undefined || attributes === undefined) return data;
    const rel = relative(repo.workTree as string, resolve(global.cwd, vpath)).split('\\').join('/');
    if (rel.startsWith('..')) return data;
    return convertToGit(repo, rel, data, attributes);
  };
  const one = (raw: Buffer, vpath?: string): void => {
    const data = filtered(raw, vpath);
    let id: Buffer;
    if (literally && (typeNo < 0 || typeNo !== OBJ_BLOB)) {
      id = write ? (repo as Repository).store.writeLooseLiterally(type, data) : hashLiterally(format, type, data);
    } else {
      const bad = objectFormatError(typeNo, data, hashLen);
      if (bad !== undefined) {
        flush();
        throw new PackwrightError('OBJECT_CORRUPT', bad);
      }
      id = write ? (repo as Repository).store.writeLoose(typeNo, data, detectCollisions) : hashObject(format, typeNo, data, detectCollisions);
    }
    out.push(`${toHex(id)}\n`);
  };
  const readFile = (file: string): Buffer => {
    try {
      return readFileSync(resolve(global.cwd, file));
    } catch (e) {
      flush();
      throw new PackwrightError('IO_ERROR', `could not open '${file}' for reading: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'No such file or directory' : (e as Error).message}`, { file });
    }
  };
  try {
    if (stdin > 0) one(readAll(io.stdin), path);
    for (const file of files) one(readFile(file), path ?? file);
    if (stdinPaths) {
      readLines(io.stdin, (line) => {
        const file = line.startsWith('"') ? unquoteC(line) : line;
        one(readFile(file), file);
      }, flush);
    }
    flush();
    return 0;
  } finally {
    repo?.close();
  }
}

function usage(message: string): never {
  throw new UsageError(`${message}\n${USAGE}`);
}


/** git's unquote_c_style for a `"..."` path line. */
function unquoteC(line: string): string {
  const m = /^"((?:[^"\\]|\\.)*)"$/.exec(line);
  if (m === null) throw new PackwrightError('INVALID_ARGUMENT', 'line is badly quoted');
  const bytes: number[] = [];
  const body = m[1] as string;
  const escapes: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== '\\') { for (const b of Buffer.from(c, 'utf8')) bytes.push(b); continue; }
    const n = body[++i] as string;
    if (/[0-3]/.test(n) && /^[0-7]{2}$/.test(body.slice(i + 1, i + 3))) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else if (escapes[n] !== undefined) {
      bytes.push(escapes[n] as number);
    } else {
      throw new PackwrightError('INVALID_ARGUMENT', 'line is badly quoted');
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
