import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { isPackwrightError } from '../errors/packwright-error.js';
import { Attributes, type AttributeValue } from './attributes.js';
import { parseIndexFile } from './index-file.js';
import type { Repository } from './repository.js';
import { childProcess } from './lazy-child-process.js';

/** git's gather_stats and convert_is_binary: a NUL, a lone CR, or too few printable bytes. */
function looksBinary(data: Uint8Array): boolean {
  let printable = 0;
  let nonPrintable = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data[i] as number;
    if (c === 0x0d) {
      if (data[i + 1] !== 0x0a) return true;
      continue;
    }
    if (c === 0x0a) continue;
    if (c === 0x7f) nonPrintable++;
    else if (c < 0x20) {
      if (c === 0) return true;
      if (c === 8 || c === 9 || c === 0x1b || c === 0x0c) printable++;
      else nonPrintable++;
    } else printable++;
  }
  // A DOS end-of-file mark at the very end is not held against the file.
  if (data.length > 0 && data[data.length - 1] === 0x1a) nonPrintable--;
  return printable >> 7 < nonPrintable;
}

/**
 * git's crlf_action for a path (convert.c, convert_attrs): `binary` (no conversion), `text` or
 * `auto` (text by detection), and whether a checkout writes CRLF (output_eol).
 */
function crlfAction(repo: Repository, attrs: Map<string, AttributeValue>): { kind: 'binary' | 'text' | 'auto'; crlf: boolean } {
  const raw = repo.config.get('core.autocrlf');
  const autocrlf = raw === 'input' ? 'input' : raw === undefined ? false : repo.config.getBool('core.autocrlf') === true;
  const coreEol = repo.config.get('core.eol');
  // text_eol_is_crlf: core.autocrlf first, then core.eol (native is LF here).
  const textEolIsCrlf = autocrlf === true ? true : autocrlf === 'input' ? false : coreEol === 'crlf';
  const fromAttr = (v: AttributeValue): 'text' | 'binary' | 'text-input' | 'auto' | undefined => {
    if (v === true) return 'text';
    if (v === false) return 'binary';
    if (v === 'input') return 'text-input';
    if (v === 'auto') return 'auto';
    return undefined;
  };
  const action = fromAttr(attrs.get('text')) ?? fromAttr(attrs.get('crlf'));
  if (action === 'binary') return { kind: 'binary', crlf: false };
  const eol = attrs.get('eol');
  if (action === 'auto') return { kind: 'auto', crlf: eol === 'crlf' ? true : eol === 'lf' ? false : textEolIsCrlf };
  if (eol === 'lf') return { kind: 'text', crlf: false };
  if (eol === 'crlf') return { kind: 'text', crlf: true };
  if (action === 'text') return { kind: 'text', crlf: textEolIsCrlf };
  if (action === 'text-input') return { kind: 'text', crlf: false };
  if (autocrlf === false) return { kind: 'binary', crlf: false };
  return { kind: 'auto', crlf: autocrlf === true };
}

/** Counts of line-ending kinds (the part of git's gather_stats the conversions look at). */
function lineEndings(data: Uint8Array): { loneLf: number; loneCr: number; crlf: number } {
  let loneLf = 0, loneCr = 0, crlf = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (c === 0x0d) {
      if (data[i + 1] === 0x0a) { crlf++; i++; } else loneCr++;
    } else if (c === 0x0a) loneLf++;
  }
  return { loneLf, loneCr, crlf };
}

/**
 * The bytes git stores for a work-tree file's contents at `path` (relative to the top of the work
 * tree), as `git hash-object` and `git add` convert them (convert.c, convert_to_git): CRLF line
 * endings become LF for files the `text`/`crlf`/`eol` attributes, or `core.autocrlf` with its text
 * detection, make text (with `checkIndex`, not when the index's version of the file has CRs
 * itself: git's safer autocrlf, which `git add` applies and `hash-object`, reading no index, does
 * not), and `ident` collapses `$Id: ...$` to `$Id$`. External `filter` drivers and
 * `working-tree-encoding` are not applied.
 */
export function convertToGit(repo: Repository, path: string, data: Buffer, attributes?: Attributes, checkIndex = false): Buffer {
  const attrs = (attributes ?? new Attributes(repo.workTree, repo.gitDir, repo.config, repo.env)).get(path, ['text', 'crlf', 'eol', 'ident']);
  let out = data;
  const { kind } = crlfAction(repo, attrs);
  if (kind !== 'binary' && out.length > 0 && out.includes(0x0d)) {
    let convert = out.includes('\r\n');
    if (kind === 'auto' && convert && (looksBinary(out) || (checkIndex && indexHasCr(repo, path)))) convert = false;
    if (convert) {
      const kept: number[] = [];
      for (let i = 0; i < out.length; i++) {
        const c = out[i] as number;
        if (c === 0x0d && (kind === 'auto' || out[i + 1] === 0x0a)) continue;
        kept.push(c);
      }
      out = Buffer.from(kept);
    }
  }
  if (attrs.get('ident') === true) out = collapseIdent(out);
  return out;
}

/** Whether the index's blob for `path` has a CR (git's has_crlf_in_index: then autocrlf leaves the file alone). */
function indexHasCr(repo: Repository, path: string): boolean {
  let index;
  try {
    index = parseIndexFile(readFileSync(join(repo.gitDir, 'index')), repo.format);
  } catch (e) {
    if (isPackwrightError(e) || (e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
  const entry = index.entries.find((e) => e.path === path && e.stage === 0);
  if (entry === undefined) return false;
  try {
    return repo.objects.read(entry.id).data.includes(0x0d);
  } catch (e) {
    if (isPackwrightError(e)) return false;
    throw e;
  }
}

/** git's ident_to_git: `$Id: <anything> $` becomes `$Id$`. */
function collapseIdent(data: Buffer): Buffer {
  const text = data.toString('latin1');
  if (!text.includes('$Id')) return data;
  return Buffer.from(text.replace(/\$Id:[^$\n]*\$/g, '$Id$'), 'latin1');
}

/**
 * The bytes a checkout writes for a blob at `path` (convert.c, convert_to_working_tree), as
 * `git cat-file --filters` shows them: `$Id$` expanded to `$Id: <blob id> $` where `ident` is set,
 * then LF line endings written as CRLF where the attributes or core.autocrlf/core.eol say so (for
 * text by detection, only a file with no CR and no binary look). External filter drivers and
 * working-tree-encoding are not applied.
 */
export function convertToWorkTree(repo: Repository, path: string, data: Buffer, blobHex: string, attributes?: Attributes): Buffer {
  const attrs = (attributes ?? new Attributes(repo.workTree, repo.gitDir, repo.config, repo.env)).get(path, ['text', 'crlf', 'eol', 'ident']);
  let out = data;
  if (attrs.get('ident') === true && out.includes('$Id$')) out = Buffer.from(out.toString('latin1').replace(/\$Id\$/g, `$Id: ${blobHex} $`), 'latin1');
  const { kind, crlf } = crlfAction(repo, attrs);
  if (kind === 'binary' || !crlf) return out;
  const stats = lineEndings(out);
  if (stats.loneLf === 0) return out;
  if (kind === 'auto' && (stats.loneCr > 0 || stats.crlf > 0 || looksBinary(out))) return out;
  const parts: number[] = [];
  for (let i = 0; i < out.length; i++) {
    const c = out[i] as number;
    if (c === 0x0a && (i === 0 || out[i - 1] !== 0x0d)) parts.push(0x0d);
    parts.push(c);
  }
  return Buffer.from(parts);
}

/**
 * What `git cat-file --textconv` shows of a blob at `path`: the output of the textconv command of
 * its diff driver (`diff=<driver>` and `diff.<driver>.textconv`, run by the shell with a temporary
 * file of the contents), or the contents as they are when it has none.
 */
export function textconv(repo: Repository, path: string, data: Buffer, attributes?: Attributes): Buffer {
  const driver = (attributes ?? new Attributes(repo.workTree, repo.gitDir, repo.config, repo.env)).get(path, ['diff']).get('diff');
  if (typeof driver !== 'string') return data;
  const command = repo.config.get(`diff.${driver}.textconv`);
  if (typeof command !== 'string') return data;
  const dir = mkdtempSync(join(tmpdir(), 'packwright-textconv-'));
  try {
    const file = join(dir, basename(path) || 'blob');
    writeFileSync(file, data);
    return childProcess().execFileSync('/bin/sh', ['-c', `${command} "$@"`, command, file], { cwd: repo.workTree ?? repo.gitDir, env: repo.env, maxBuffer: 1 << 30 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
