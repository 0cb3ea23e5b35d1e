import { PackwrightError } from '../errors/packwright-error.js';
import { decodeObjectText, splitObjectHeaders, type HeaderLine } from './object-headers.js';
import { parsePerson, type Person } from './person.js';

/** A commit, parsed whole (ids as lowercase hex). */
export interface CommitObject {
  id: string;
  tree: string;
  parents: string[];
  author: Person;
  committer: Person;
  /** The message after the headers' blank line, as stored (its final newline included). */
  message: string;
  /** The `encoding` header, when the commit has one (the text was decoded with it when TextDecoder knows it). */
  encoding?: string | undefined;
  /** The signature (`gpgsig`, or `gpgsig-sha256`), its continuation lines joined. */
  gpgsig?: string | undefined;
  /** Every other header in order (`mergetag`, ones git does not know). */
  extraHeaders: HeaderLine[];
}

const KNOWN = new Set(['tree', 'parent', 'author', 'committer', 'encoding', 'gpgsig', 'gpgsig-sha256']);

/** Parses a commit's bytes; OBJECT_CORRUPT when it has no tree line, or lacks an author or committer. */
export function parseCommitObject(id: string, data: Uint8Array): CommitObject {
  const { text, encoding } = decodeObjectText(data);
  const { headers, message } = splitObjectHeaders(text);
  const one = (name: string): string | undefined => headers.find((h) => h.name === name)?.value;
  const tree = one('tree');
  const author = one('author');
  const committer = one('committer');
  if (tree === undefined || author === undefined || committer === undefined) {
    throw new PackwrightError('OBJECT_CORRUPT', `commit ${id} lacks a ${tree === undefined ? 'tree' : author === undefined ? 'author' : 'committer'} line`);
  }
  const gpgsig = one('gpgsig') ?? one('gpgsig-sha256');
  return {
    id,
    tree,
    parents: headers.filter((h) => h.name === 'parent').map((h) => h.value),
    author: parsePerson(author),
    committer: parsePerson(committer),
    message,
    ...(encoding !== undefined ? { encoding } : {}),
    ...(gpgsig !== undefined ? { gpgsig } : {}),
    extraHeaders: headers.filter((h) => !KNOWN.has(h.name)),
  };
}
