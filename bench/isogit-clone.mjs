// Reference case: isomorphic-git's clone (noCheckout, every branch and tag) from a smart HTTP URL
// into DIR (usage: node isogit-clone.mjs URL DIR).
import * as fs from 'node:fs';
import git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';

const [url, dir] = process.argv.slice(2);
fs.rmSync(dir, { recursive: true, force: true });
await git.clone({ fs, http, dir, url, noCheckout: true });
