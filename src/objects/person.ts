// A person line of a commit or tag (`author`, `committer`, `tagger`): `Name <email> <seconds> <±hhmm>`.

/** Who, and when, as isomorphic-git gives it. */
export interface Person {
  name: string;
  email: string;
  /** Seconds since the epoch. */
  timestamp: number;
  /**
   * The zone as JavaScript's Date#getTimezoneOffset counts it: minutes *behind* UTC (`+0100` is
   * -60, `-0500` is 300), as isomorphic-git does; `-0000` is -0 (`Object.is(offset, -0)`), so it
   * is written back as git stored it.
   */
  timezoneOffset: number;
}

/**
 * Parses a person line's value as git's split_ident_line does: the name before the first `<`
 * (trailing spaces trimmed), the email up to the `>` after it, then the date and the zone; a
 * missing or unreadable date is 0, a missing zone +0000.
 */
export function parsePerson(text: string): Person {
  const lt = text.indexOf('<');
  const gt = lt < 0 ? -1 : text.indexOf('>', lt + 1);
  if (lt < 0 || gt < 0) return { name: text.trim(), email: '', timestamp: 0, timezoneOffset: 0 };
  const name = text.slice(0, lt).trimEnd();
  const email = text.slice(lt + 1, gt);
  const m = /^\s*(\d+)(?:\s+([+-])(\d\d)(\d\d))?/.exec(text.slice(gt + 1));
  if (m === null) return { name, email, timestamp: 0, timezoneOffset: 0 };
  const minutes = m[2] === undefined ? 0 : (m[2] === '+' ? 1 : -1) * (Number(m[3]) * 60 + Number(m[4]));
  // Negated, but -0000 stays -0 and +0000 stays 0 (isomorphic-git's negateExceptForZero).
  return { name, email, timestamp: Number(m[1]), timezoneOffset: minutes === 0 ? minutes : -minutes };
}

/** The person line git writes for `person` (`Name <email> 1700000000 +0100`). */
export function formatPerson(person: Person): string {
  const offset = person.timezoneOffset;
  const sign = offset < 0 || (offset === 0 && !Object.is(offset, -0)) ? '+' : '-';
  const abs = Math.abs(offset);
  const zone = `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
  return `${person.name} <${person.email}> ${person.timestamp} ${zone}`;
}
