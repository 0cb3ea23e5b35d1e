/** Seconds in each unit git's approxidate knows (months and years are calendar steps instead). */
const UNIT_SECONDS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86400, week: 7 * 86400 };

/**
 * A date as seconds since the epoch, for the forms git's approxidate takes in revision syntax and
 * `--since`: `@<seconds>` or a number of seconds (a time zone after it ignored), `now`, `yesterday`, relative spans
 * (`1.year.ago`, `2 weeks 3 days ago`, `noon yesterday` is not), and absolute dates (ISO 8601,
 * RFC 2822, `YYYY-MM-DD hh:mm:ss` as local time). Undefined for anything else.
 */
export function approxidate(text: string, now = Date.now()): number | undefined {
  const t = text.trim().toLowerCase();
  if (/^@\d+$/.test(t)) return Number(t.slice(1));
  // A number of seconds, with a time zone after it or not, as git writes dates ('1400000000 +0700').
  const raw = /^(\d{9,})(?:\s+[+-]\d{4})?$/.exec(t);
  if (raw !== null) return Number(raw[1]);
  if (t === 'now') return Math.floor(now / 1000);
  if (t === 'yesterday') return Math.floor(now / 1000) - 86400;
  const words = t.split(/[.\s_]+/).filter((w) => w !== '');
  if (words.length >= 3 && words[words.length - 1] === 'ago') {
    const date = new Date(now);
    let seconds = 0;
    for (let i = 0; i < words.length - 1; i += 2) {
      const n = Number(words[i]);
      const unit = (words[i + 1] ?? '').replace(/s$/, '');
      if (!Number.isInteger(n)) return undefined;
      if (unit === 'month') date.setMonth(date.getMonth() - n);
      else if (unit === 'year') date.setFullYear(date.getFullYear() - n);
      else if (UNIT_SECONDS[unit] !== undefined) seconds += n * (UNIT_SECONDS[unit] as number);
      else return undefined;
    }
    return Math.floor(date.getTime() / 1000) - seconds;
  }
  const ms = Date.parse(text.trim());
  return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000);
}
