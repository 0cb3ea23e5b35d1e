import { PackwrightError } from '../errors/packwright-error.js';

/** The header lines of a commit or tag before the blank line, `key value` (continuations joined). */
function headerValues(data: Buffer, key: string): string[] {
  const end = data.indexOf('\n\n');
  const head = data.toString('utf8', 0, end < 0 ? data.length : end);
  const out: string[] = [];
  for (const line of head.split('\n')) {
    if (line.startsWith(key + ' ')) out.push(line.slice(key.length + 1));
  }
  return out;
}

export interface CommitHeader {
  tree: string;
  parents: string[];
}

export function parseCommit(data: Buffer, idForErrors = '<commit>'): CommitHeader {
  const tree = headerValues(data, 'tree')[0];
  if (tree === undefined) throw new PackwrightError('OBJECT_CORRUPT', `commit ${idForErrors} has no tree line`);
  return { tree, parents: headerValues(data, 'parent') };
}

export interface TagHeader {
  object: string;
  type: string;
}

export function parseTag(data: Buffer, idForErrors = '<tag>'): TagHeader {
  const object = headerValues(data, 'object')[0];
  const type = headerValues(data, 'type')[0];
  if (object === undefined || type === undefined) throw new PackwrightError('OBJECT_CORRUPT', `tag ${idForErrors} lacks an object or type line`);
  return { object, type };
}
