/** A ref name as git's reports show it (prettify_refname): without `refs/heads/`, `refs/tags/` or `refs/remotes/`. */
export function prettyRefName(name: string): string {
  for (const prefix of ['refs/heads/', 'refs/tags/', 'refs/remotes/']) if (name.startsWith(prefix)) return name.slice(prefix.length);
  return name;
}
