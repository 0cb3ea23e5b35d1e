// Reference case: isomorphic-git's indexPack on a pack copied into DIR (usage: node isogit-index-pack.mjs DIR pack-name.pack).
import fs from 'node:fs';
import git from 'isomorphic-git';
const [dir, name] = process.argv.slice(2);
await git.indexPack({ fs, dir, gitdir: dir, filepath: name });
