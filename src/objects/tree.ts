import { PackwrightError } from '../errors/packwright-error.js';

export interface TreeEntry {
  /** Octal mode as git stores it ("40000", "100644", "120000", "160000"). */
  mode: string;
  name: Buffer;
  id: Buffer;
}

/** Parses a tree object: `<octal mode> <name>\0<raw id>` repeated, no count (gitformat: tree). */
export function parseTree(data: Buffer, hashLength: number, idForErrors = '<tree>'): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let p = 0;
  while (p < data.length) {
    const space = data.indexOf(0x20, p);
    const nul = space < 0 ? -1 : data.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + hashLength > data.length) {
      throw new PackwrightError('OBJECT_CORRUPT', `tree ${idForErrors} is malformed at byte ${p}`, { offset: p });
    }
    entries.push({
      mode: data.toString('latin1', p, space),
      name: data.subarray(space + 1, nul),
      id: data.subarray(nul + 1, nul + 1 + hashLength),
    });
    p = nul + 1 + hashLength;
  }
  return entries;
}

/** The object type a tree entry's mode implies. */
export function modeType(mode: string): 'tree' | 'commit' | 'blob' {
  if (mode === '40000' || mode === '040000') return 'tree';
  if (mode === '160000') return 'commit';
  return 'blob';
}

/** `git cat-file -p` / `ls-tree` form: `<6-digit mode> <type> <hex id>\t<name>`. */
export function formatTree(data: Buffer, hashLength: number): Buffer {
  const parts: Buffer[] = [];
  for (const e of parseTree(data, hashLength)) {
    const mode = e.mode.padStart(6, '0');
    parts.push(Buffer.from(`${mode} ${modeType(e.mode)} ${e.id.toString('hex')}\t`, 'latin1'), e.name, Buffer.from('\n'));
  }
  return Buffer.concat(parts);
}
