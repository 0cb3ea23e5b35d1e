import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isPackwrightError } from '../errors/packwright-error.js';
import { Attributes, type AttributeValue } from './attributes.js';
import { parseIndexFile } from './index-file.js';
import type { Repository } from './repository.js';

/** What git's convert.c does with line endings on the way in (its crlf_action, for to-git). */
type CrlfAction = 'binary' | 'text' | 'auto';

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

function crlfAction(attrs: Map<string, AttributeValue>, autocrlf: string | boolean | undefined): CrlfAction | undefined {
  const fromAttr = (v: AttributeValue): CrlfAction | 'input' | undefined => {
    if (v === true) return 'text';
    if (v === false) return 'binary';
    if (v === 'input') return 'input';
    if (v === 'auto') return 'auto';
    return undefined;
  };
  let action = fromAttr(attrs.get('text')) ?? fromAttr(attrs.get('crlf'));
  if (action === 'input') action = 'text';
  if (action !== 'binary') {
    const eol = attrs.get('eol');
    // eol=lf / eol=crlf make a file text (auto stays auto).
    if (action === undefined && (eol === 'lf' || eol === 'crlf')) action = 'text';
  }
  if (action !== undefined) return action;
  if (autocrlf === true || autocrlf === 'input') return 'auto';
  return undefined;
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
  const attrs = (attributes ?? new Attributes(repo.workTree, repo.gitDir, repo.config)).get(path, ['text', 'crlf', 'eol', 'ident']);
  const raw = repo.config.get('core.autocrlf');
  const autocrlf = raw === 'input' ? 'input' : raw === undefined ? undefined : repo.config.getBool('core.autocrlf');
  let out = data;
  const action = crlfAction(attrs, autocrlf);
  if (action !== undefined && action !== 'binary' && out.length > 0 && out.includes(0x0d)) {
    let convert = out.includes('\r\n');
    if (action === 'auto' && convert && (looksBinary(out) || (checkIndex && indexHasCr(repo, path)))) convert = false;
    if (convert) {
      const kept: number[] = [];
      for (let i = 0; i < out.length; i++) {
        const c = out[i] as number;
        if (c === 0x0d && (action === 'auto' || out[i + 1] === 0x0a)) continue;
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
