import { PackwrightError } from '../errors/packwright-error.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE } from '../objects/object-type.js';

/**
 * What a partial clone leaves out (git's `--filter=<spec>`, list-objects-filter-options): all
 * blobs; blobs of at least `bytes`; trees and blobs at `depth` or deeper (a commit's tree is at
 * depth 0, its entries at 1: `tree:0` leaves out every tree and blob, `tree:1` keeps the root
 * trees only); every object but those of one type; blobs at no path that a sparse-checkout
 * specification stored in a blob takes in (`sparse:oid=<blob-ish>`, the name resolved by the side
 * that filters); or only what each of several filters keeps (`combine:`). Objects named as tips
 * are sent all the same, as git sends what it is asked for by name.
 */
export type ObjectFilter =
  | { kind: 'blob:none' }
  | { kind: 'blob:limit'; bytes: number }
  | { kind: 'tree'; depth: number }
  | { kind: 'object:type'; type: number }
  | { kind: 'sparse:oid'; name: string }
  | { kind: 'combine'; filters: ObjectFilter[] };

const TYPES: Record<string, number> = { commit: OBJ_COMMIT, tree: OBJ_TREE, blob: OBJ_BLOB, tag: OBJ_TAG };

/** Characters a sub-filter of `combine:` must have percent-encoded (git's RESERVED_NON_WS, and space and controls). */
const RESERVED = '~`!@#$^&*()[]{}\\;\'",<>?';

/**
 * A filter spec as git passes it on and records it (expand_list_objects_filter_spec): a size
 * limit in bytes (`blob:limit=1k` is `blob:limit=1024`), the rest as given; INVALID_ARGUMENT for a
 * spec git refuses.
 */
export function normalizeFilterSpec(spec: string): string {
  const filter = parseObjectFilter(spec);
  return filter.kind === 'blob:limit' ? `blob:limit=${filter.bytes}` : spec;
}

/**
 * Parses a filter spec as git's gently_parse_list_objects_filter does, with its messages; all
 * errors are INVALID_ARGUMENT.
 */
export function parseObjectFilter(spec: string): ObjectFilter {
  const fail = (message: string): never => {
    throw new PackwrightError('INVALID_ARGUMENT', message);
  };
  if (spec === 'blob:none') return { kind: 'blob:none' };
  if (spec.startsWith('blob:limit=')) {
    const bytes = parseUnsigned(spec.slice('blob:limit='.length));
    if (bytes !== undefined) return { kind: 'blob:limit', bytes };
  } else if (spec.startsWith('tree:')) {
    const depth = parseUnsigned(spec.slice('tree:'.length));
    return depth === undefined ? fail("expected 'tree:<depth>'") : { kind: 'tree', depth };
  } else if (spec.startsWith('sparse:oid=')) {
    return { kind: 'sparse:oid', name: spec.slice('sparse:oid='.length) };
  } else if (spec.startsWith('sparse:path=')) {
    fail('sparse:path filters support has been dropped');
  } else if (spec.startsWith('object:type=')) {
    const name = spec.slice('object:type='.length);
    const type = TYPES[name];
    return type === undefined ? fail(`'${name}' for 'object:type=<type>' is not a valid object type`) : { kind: 'object:type', type };
  } else if (spec.startsWith('combine:')) {
    const parts = spec.slice('combine:'.length);
    if (parts === '') fail('expected something after combine:');
    // Pieces as git's strbuf_split_str makes them: each keeps its '+' but the last, which is
    // what a trailing '+' stays part of ("tree:2+" is then a bad tree: filter, as in git).
    const pieces = parts.split('+');
    if (pieces.length > 1 && pieces[pieces.length - 1] === '') {
      pieces.pop();
      pieces[pieces.length - 1] += '+';
    }
    const filters = pieces.map((part) => {
      for (const c of part) if (c <= ' ' || RESERVED.includes(c)) fail(`must escape char in sub-filter-spec: '${c}'`);
      return parseObjectFilter(percentDecode(part));
    });
    return { kind: 'combine', filters };
  }
  return fail(`invalid filter-spec '${spec}'`);
}

/**
 * git_parse_ulong: digits as strtoumax reads them with base 0 (0x hex, 0 octal, else decimal;
 * leading white space and a '+' allowed, no '-'), then nothing or a k, m or g unit; undefined when
 * that is not what is there or the value passes 2^64-1.
 */
function parseUnsigned(text: string): number | undefined {
  if (text === '' || text.includes('-')) return undefined;
  const m = /^[ \t\n\v\f\r]*\+?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)(.*)$/s.exec(text);
  if (m === null) return undefined;
  const digits = m[1] as string;
  const factor = { '': 1n, k: 1024n, m: 1024n ** 2n, g: 1024n ** 3n }[(m[2] as string).toLowerCase()];
  if (factor === undefined) return undefined;
  const value = BigInt(/^0[0-7]+$/.test(digits) ? `0o${digits.slice(1)}` : digits) * factor;
  return value > 0xffffffffffffffffn ? undefined : Number(value);
}

/** url_percent_decode: each `%XX` becomes its byte; a `%` not followed by two hex digits stays. */
function percentDecode(text: string): string {
  if (!text.includes('%')) return text;
  const bytes: number[] = [];
  const raw = Buffer.from(text, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as number;
    const hex = c === 0x25 ? raw.toString('latin1', i + 1, i + 3) : '';
    if (/^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(c);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
