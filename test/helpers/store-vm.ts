import { existsSync, mkdirSync, rmSync, writeFileSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { writeObjectsPack } from './pack-builder.js';
import { seededRandom } from './random.js';
import { Store, forEachObject, writeMultiPackIndexFile, type ObjectLocation, type RefreshPolicy, type StoreHandle } from '../../src/odb/index.js';
import { isPackwrightError } from '../../src/errors/index.js';
import { hashObject } from '../../src/hash/index.js';
import { writeLoose } from '../../src/loose/index.js';

/**
 * The "fuzz VM" of the dynamic store: a seeded sequence of disk changes (packs published and
 * removed file by file, as `git repack -ad` and `git gc` do; loose objects written and pruned;
 * a multi-pack-index written by git and removed; an index corrupted and restored; an alternate
 * added and dropped) interleaved with lookups, prefix questions, iteration and refreshes on
 * several handles and a fake clock. After every step the answers are checked against a model of
 * what must be visible:
 *
 * - a lookup that finds an object returns its exact bytes (always);
 * - under `'on-miss'` every object that is on disk is found;
 * - under a window, every object that was on disk at the store's last listing, and still is
 *   where it was, is found (an object that appeared since may be missed inside the window);
 * - iteration yields each id once, and every object on disk where the last listing saw it.
 *
 * A failure throws with the seed and the step, and the same seed replays it exactly.
 */

const UNIVERSE = 48;
const BLOB = 3;

interface PackModel {
  base: string;
  objects: number[];
  hasPack: boolean;
  hasIdx: boolean;
  corrupt: boolean;
  /** In the alternate's pack directory rather than the store's own. */
  alternate: boolean;
}

export interface VmResult {
  steps: number;
  lookups: number;
  found: number;
  scans: number;
  /** Held locations read later: with the right bytes, and with a typed error (pack gone). */
  heldRead: number;
  heldGone: number;
}

export function runStoreVm(root: string, seed: number, steps: number, policy: RefreshPolicy): VmResult {
  const random = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const chance = (p: number): boolean => random() < p;
  const gitDir = join(root, 'repo.git');
  execFileSync('git', ['init', '-q', '--bare', gitDir]);
  const objectsDir = join(gitDir, 'objects');
  const packDir = join(objectsDir, 'pack');
  const altObjects = join(root, 'alt', 'objects');
  mkdirSync(join(altObjects, 'pack'), { recursive: true });
  mkdirSync(packDir, { recursive: true });
  const contents = Array.from({ length: UNIVERSE }, (_, i) => Buffer.from(`object ${i} of seed ${seed}\n`));
  const ids = contents.map((c) => hashObject('sha1', BLOB, c));
  const packs: PackModel[] = [];
  const loose = new Set<number>();
  let alternatesOn = false;
  let t = 0;
  const store = Store.open(gitDir, { refresh: policy, now: () => t });
  const handles: StoreHandle[] = [store.handle(), store.handle(), store.handle()];
  /** Where each object could be found at the store's last listing (pack bases and loose). */
  let listedPacks = new Set<string>();
  let scans = store.counters.scans;
  const result: VmResult = { steps: 0, lookups: 0, found: 0, scans: 0, heldRead: 0, heldGone: 0 };
  const log: string[] = [];
  let held: { object: number; location: ObjectLocation } | undefined;

  const usable = (p: PackModel): boolean => p.hasPack && p.hasIdx && !p.corrupt && (!p.alternate || alternatesOn);
  const onDisk = (o: number): boolean => loose.has(o) || packs.some((p) => usable(p) && p.objects.includes(o));
  /** On disk where the store's last listing saw it (what iteration, which never lists, must yield). */
  const listed = (o: number): boolean => loose.has(o) || packs.some((p) => usable(p) && listedPacks.has(p.base) && p.objects.includes(o));
  /** What a lookup must find: a miss lists again under on-miss, so everything on disk. */
  const mustFind = (o: number): boolean => (policy === 'on-miss' ? onDisk(o) : listed(o));
  const fail = (step: number, what: string): never => {
    throw new Error(`store VM (seed ${seed}, policy ${JSON.stringify(policy)}) failed at step ${step}: ${what}\nlast steps:\n${log.slice(-12).join('\n')}`);
  };
  const noteScans = (): void => {
    if (store.counters.scans !== scans) {
      scans = store.counters.scans;
      listedPacks = new Set(packs.filter((p) => p.hasPack && p.hasIdx && (!p.alternate || alternatesOn)).map((p) => p.base));
    }
  };

  for (let step = 0; step < steps; step++) {
    try {
      runStep(step);
    } catch (e) {
      if ((e as Error).message.startsWith('store VM (seed')) throw e;
      fail(step, `threw ${(e as Error).stack ?? String(e)}`);
    }
  }
  result.scans = store.counters.scans;
  for (const h of handles) h.close();
  store.close();
  return result;

  function runStep(step: number): void {
    result.steps++;
    const r = random();
    const h = pick(handles);
    if (r < 0.12) {
      const alternate = alternatesOn && chance(0.2);
      const members = [...new Set(Array.from({ length: 1 + Math.floor(random() * 8) }, () => Math.floor(random() * UNIVERSE)))];
      const dir = alternate ? join(altObjects, 'pack') : packDir;
      const { base } = writeObjectsPack(dir, 'sha1', members.map((o) => ({ type: BLOB, data: contents[o] as Buffer })));
      const existing = packs.find((p) => p.base === base);
      if (existing !== undefined) { existing.hasPack = true; existing.hasIdx = true; existing.corrupt = false; }
      else packs.push({ base, objects: members, hasPack: true, hasIdx: true, corrupt: false, alternate });
      log.push(`${step}: publish pack ${base.slice(-8)} with ${members.join(',')}${alternate ? ' (alternate)' : ''}`);
    } else if (r < 0.16) {
      // git repack -ad, first half: one pack of everything on disk (the old ones stay for now).
      const members = [...Array(UNIVERSE).keys()].filter(onDisk);
      if (members.length > 0) {
        const { base } = writeObjectsPack(packDir, 'sha1', members.map((o) => ({ type: BLOB, data: contents[o] as Buffer })));
        const existing = packs.find((p) => p.base === base);
        if (existing !== undefined) { existing.hasPack = true; existing.hasIdx = true; existing.corrupt = false; }
        else packs.push({ base, objects: members, hasPack: true, hasIdx: true, corrupt: false, alternate: false });
        log.push(`${step}: repack into ${base.slice(-8)}`);
      }
    } else if (r < 0.26) {
      const p = packs.filter((x) => x.hasPack || x.hasIdx);
      if (p.length > 0) {
        const victim = pick(p);
        const which = victim.hasPack && victim.hasIdx ? (chance(0.5) ? 'pack' : 'idx') : victim.hasPack ? 'pack' : 'idx';
        rmSync(`${victim.base}.${which}`, { force: true });
        if (which === 'pack') victim.hasPack = false;
        else victim.hasIdx = false;
        log.push(`${step}: remove ${victim.base.slice(-8)}.${which}`);
      }
    } else if (r < 0.30) {
      const o = Math.floor(random() * UNIVERSE);
      writeLoose(objectsDir, (ids[o] as Buffer).toString('hex'), BLOB, contents[o] as Buffer);
      loose.add(o);
      log.push(`${step}: write loose ${o}`);
    } else if (r < 0.33) {
      if (loose.size > 0) {
        const o = pick([...loose]);
        const hex = (ids[o] as Buffer).toString('hex');
        rmSync(join(objectsDir, hex.slice(0, 2), hex.slice(2)));
        loose.delete(o);
        log.push(`${step}: prune loose ${o}`);
      }
    } else if (r < 0.35) {
      const local = packs.filter((p) => !p.alternate && (p.hasPack || p.hasIdx));
      if (local.length > 0 && local.every((p) => p.hasPack && p.hasIdx && !p.corrupt)) {
        // Half the time git writes it, half the time packwright (through another store, as a
        // separate maintenance process would).
        const byGit = chance(0.5);
        if (byGit) execFileSync('git', ['--git-dir', gitDir, 'multi-pack-index', 'write'], { stdio: 'ignore' });
        else {
          const writer = Store.open(gitDir);
          writeMultiPackIndexFile(writer);
          writer.close();
        }
        log.push(`${step}: multi-pack-index write over ${local.length} packs (${byGit ? 'git' : 'packwright'})`);
      } else if (existsSync(join(packDir, 'multi-pack-index'))) {
        rmSync(join(packDir, 'multi-pack-index'));
        log.push(`${step}: remove multi-pack-index`);
      }
    } else if (r < 0.39) {
      // An index corrupted (version 3), or a corrupted one restored, replaced whole by rename.
      const corrupt = r < 0.37;
      const p = packs.filter((x) => x.hasIdx && x.corrupt !== corrupt);
      if (p.length > 0) {
        const victim = pick(p);
        const bytes = readFileSync(`${victim.base}.idx`);
        bytes.writeUInt32BE(corrupt ? 3 : 2, 4);
        writeFileSync(`${victim.base}.idx.vm`, bytes);
        renameSync(`${victim.base}.idx.vm`, `${victim.base}.idx`);
        victim.corrupt = corrupt;
        log.push(`${step}: ${corrupt ? 'corrupt' : 'restore'} ${victim.base.slice(-8)}.idx`);
      }
    } else if (r < 0.41) {
      alternatesOn = !alternatesOn;
      mkdirSync(join(objectsDir, 'info'), { recursive: true });
      writeFileSync(join(objectsDir, 'info', 'alternates'), alternatesOn ? `${altObjects}\n` : '');
      log.push(`${step}: alternates ${alternatesOn ? 'on' : 'off'}`);
    } else if (r < 0.45) {
      t += Math.floor(random() * 1500);
      log.push(`${step}: clock ${t}`);
    } else if (r < 0.46) {
      h.refresh();
      log.push(`${step}: refresh handle ${handles.indexOf(h)}`);
    } else if (r < 0.47) {
      // A handle goes away (its view's packs may close) and a new one takes its place.
      const k = handles.indexOf(h);
      h.close();
      handles[k] = store.handle();
      log.push(`${step}: replace handle ${k}`);
    } else if (r < 0.48) {
      // A location kept across steps: read later, it gives the same bytes, or, once its pack has
      // closed and its files are gone, a typed error; never other bytes.
      if (held !== undefined && chance(0.5)) {
        try {
          if (!h.readAt(held.location).data.equals(contents[held.object] as Buffer)) fail(step, `a held location of object ${held.object} reads other bytes`);
          result.heldRead++;
          log.push(`${step}: read held location of ${held.object}`);
        } catch (e) {
          if (!isPackwrightError(e)) throw e;
          noteScans();
          if (mustFind(held.object)) fail(step, `a held location of object ${held.object}, which is on disk (${describe(held.object)}), fails: ${e.message}`);
          result.heldGone++;
          log.push(`${step}: held location of ${held.object}: ${e.code}`);
        }
        held = undefined;
      } else {
        const o = Math.floor(random() * UNIVERSE);
        const location = h.locate(ids[o] as Buffer);
        if (location !== undefined) held = { object: o, location };
        log.push(`${step}: hold a location of ${o}: ${location === undefined ? 'missing' : location.kind}`);
      }
    } else if (r < 0.50) {
      const seen = new Set<string>();
      forEachObject(h, {}, (id, location) => {
        const hex = id.toString('hex');
        if (seen.has(hex)) fail(step, `iteration yields ${hex} twice`);
        seen.add(hex);
        const o = ids.findIndex((x) => x.equals(id));
        if (o < 0) fail(step, `iteration yields ${hex}, which was never written`);
        if (chance(0.2) && !h.readAt(location).data.equals(contents[o] as Buffer)) fail(step, `iteration: wrong bytes for object ${o}`);
      });
      noteScans();
      for (let o = 0; o < UNIVERSE; o++) {
        if (listed(o) && !seen.has((ids[o] as Buffer).toString('hex'))) fail(step, `iteration misses object ${o} (${describe(o)}); the handle searches ${sourcesOf(h)}`);
      }
      log.push(`${step}: iterate handle ${handles.indexOf(h)}: ${seen.size}`);
    } else {
      const o = Math.floor(random() * UNIVERSE);
      const id = ids[o] as Buffer;
      result.lookups++;
      const kind = random();
      let found: boolean;
      if (kind < 0.15) {
        const m = h.resolvePrefix(id.toString('hex').slice(0, 12));
        if (m.kind === 'ambiguous') fail(step, `prefix of ${o} is ambiguous`);
        if (m.kind === 'unique' && !m.id.equals(id)) fail(step, `prefix of ${o} names ${m.id.toString('hex')}`);
        found = m.kind === 'unique';
      } else if (kind < 0.4) {
        found = h.has(id);
      } else {
        const location = h.locate(id);
        found = location !== undefined;
        if (location !== undefined && !h.readAt(location).data.equals(contents[o] as Buffer)) fail(step, `wrong bytes for object ${o}`);
      }
      noteScans();
      if (found) result.found++;
      log.push(`${step}: handle ${handles.indexOf(h)} looks up ${o}: ${found ? 'found' : 'missing'}`);
      if (!found && mustFind(o)) fail(step, `object ${o} is on disk (${describe(o)}) but was not found`);
    }
    noteScans();
  }

  function sourcesOf(h: StoreHandle): string {
    return h.sources().map((x) => ('packNames' in x.index && !('packPath' in x)
      ? `midx[${(x.index as { packNames: readonly string[] }).packNames.map((n) => n.slice(-12, -4)).join(',')}]`
      : `${(x as { packPath: string }).packPath.slice(-13, -5)}${(x as { error?: { code: string } }).error ? ` (${(x as { error: { code: string } }).error.code})` : ''}`)).join('; ');
  }

  function describe(o: number): string {
    const where = packs.filter((p) => p.objects.includes(o)).map((p) => `${p.base.slice(-8)}${p.hasPack ? '' : ' -pack'}${p.hasIdx ? '' : ' -idx'}${p.corrupt ? ' corrupt' : ''}${p.alternate ? ' alt' : ''}`);
    return `${loose.has(o) ? 'loose, ' : ''}packs: ${where.join('; ') || 'none'}`;
  }
}
