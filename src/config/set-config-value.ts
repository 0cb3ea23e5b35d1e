import { readFileSync } from 'node:fs';
import { PackwrightError } from '../errors/packwright-error.js';
import { writeFileAtomic } from '../io/write-file-atomic.js';
import { normalizeKey } from './git-config.js';

/**
 * Sets `key` (`section.name` or `section.subsection.name`) in the config file at `file`, as git's
 * `git config` writes it (git_config_set_multivar_in_file): one value there already is replaced
 * on its line; several are refused, unless `replaceAll`, which removes them all and writes one;
 * none, and the line goes at the end of the key's last section, or in a new section at the end of
 * the file. The file is written through `<file>.lock`, created exclusively, then renamed over it:
 * a writer at the same time fails with CONFIG_LOCKED instead of losing an update.
 */
export function setConfigValue(file: string, key: string, value: string, options: { replaceAll?: boolean } = {}): void {
  const canonical = normalizeKey(key);
  const first = canonical.indexOf('.');
  const last = canonical.lastIndexOf('.');
  const section = canonical.slice(0, first);
  const subsection = first === last ? undefined : canonical.slice(first + 1, last);
  const name = canonical.slice(last + 1);
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  // Where the key's sections end (the line after each one's last), and its lines in them.
  let inSection = false;
  let sectionEnd = -1;
  const found: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const header = /^\s*\[([^\]"\s]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
    if (header !== null) {
      const sub = header[2]?.replace(/\\(.)/g, '$1');
      inSection = (header[1] as string).toLowerCase() === section && sub === subsection;
      if (inSection) sectionEnd = i + 1;
      continue;
    }
    if (!inSection) continue;
    if (/^\s*[A-Za-z][-A-Za-z0-9]*/.test(line) && (/^\s*([A-Za-z][-A-Za-z0-9]*)/.exec(line) as RegExpExecArray)[1]?.toLowerCase() === name) found.push(i);
    // A value continued on the next line (a backslash at its end) is part of this one.
    let j = i;
    while (/\\$/.test(lines[j] as string) && j + 1 < lines.length) j++;
    i = j;
    sectionEnd = j + 1;
  }
  if (found.length > 1 && options.replaceAll !== true) throw new PackwrightError('CONFIG_INVALID', `cannot overwrite multiple values with a single value for ${key} in ${file}`, { file });
  const written = `\t${name} = ${quoteConfigValue(value)}`;
  if (found.length === 1 && options.replaceAll !== true) {
    lines[found[0] as number] = written;
  } else {
    // Lines of the removed values go (with their continuations) before the new one is placed.
    for (const at of [...found].reverse()) {
      let end = at;
      while (/\\$/.test(lines[end] as string) && end + 1 < lines.length) end++;
      lines.splice(at, end - at + 1);
      if (sectionEnd > at) sectionEnd -= end - at + 1;
    }
    if (sectionEnd >= 0) lines.splice(sectionEnd, 0, written);
    else lines.push(subsection === undefined ? `[${section}]` : `[${section} "${subsection.replace(/["\\]/g, '\\$&')}"]`, written);
  }
  const lock = `${file}.lock`;
  try {
    writeFileAtomic(file, Buffer.from(`${lines.join('\n')}\n`), 0o666, lock);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new PackwrightError('CONFIG_LOCKED', `could not lock config file ${file}: File exists`, { file: lock });
    throw e;
  }
}

/** A value as git writes it: quoted when it starts or ends with a space or holds `#` or `;`, with `\`, `"`, tabs and newlines escaped. */
function quoteConfigValue(value: string): string {
  const escaped = value.replace(/[\\"]/g, '\\$&').replace(/\n/g, '\\n').replace(/\t/g, '\\t');
  return /^ | $|[#;]/.test(value) ? `"${escaped}"` : escaped;
}
