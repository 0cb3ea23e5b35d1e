import { PackwrightError } from '../errors/packwright-error.js';
import { decodeObjectText, splitObjectHeaders, type HeaderLine } from './object-headers.js';
import { formatPerson, parsePerson, type Person } from './person.js';

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

/** What a new commit is made of (`writeCommit`): the committer defaults to the author. */
export interface NewCommit {
  tree: string;
  parents?: readonly string[] | undefined;
  author: Person;
  committer?: Person | undefined;
  message: string;
  encoding?: string | undefined;
  /** Headers between the committer (or encoding) and the signature, as given (`mergetag`). */
  extraHeaders?: readonly HeaderLine[] | undefined;
  gpgsig?: string | undefined;
}

/** A header line as git writes one: continuation lines start with a space. */
function headerLine(name: string, value: string): string {
  return `${name} ${value.split('\n').join('\n ')}\n`;
}

/** The bytes of a commit as git's commit-tree writes them: tree, parents, author, committer, encoding, extra headers, signature, a blank line, the message. */
export function formatCommitObject(c: NewCommit): Buffer {
  let text = `tree ${c.tree}\n`;
  for (const p of c.parents ?? []) text += `parent ${p}\n`;
  text += `author ${formatPerson(c.author)}\ncommitter ${formatPerson(c.committer ?? c.author)}\n`;
  if (c.encoding !== undefined) text += `encoding ${c.encoding}\n`;
  for (const h of c.extraHeaders ?? []) text += headerLine(h.name, h.value);
  if (c.gpgsig !== undefined) text += headerLine('gpgsig', c.gpgsig.replace(/\n$/, ''));
  return Buffer.from(`${text}\n${c.message}`, 'utf8');
}
