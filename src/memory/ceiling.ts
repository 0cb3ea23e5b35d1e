/**
 * The memory ceiling every command plans under (`--max-memory`, library `maxMemory`, config
 * `packwright.maxMemory`): what index-pack, verify-pack and the store spend it on is planned in
 * resolve/memory-plan.ts and odb/store-memory-plan.ts, from the figures here.
 */

/**
 * The default ceiling: peak RSS stays under it for any pack of up to about a million objects,
 * whatever its size (git's own index-pack peaked at 78 MB on an 850k-object pack). Past that,
 * what every object needs in memory (ids, offsets, the tables of a pass) is a floor that a
 * ceiling cannot lower, and the ceiling is exceeded by it.
 */
export const DEFAULT_MAX_MEMORY = 256 * 1024 * 1024;

/** Objects the default ceiling holds everything for; each one past them adds PER_MORE_OBJECT. */
const DEFAULT_OBJECTS = 1_000_000;
/**
 * What the default grants an object past the first million: about half of what git's index-pack
 * takes (828 MiB at 10M objects, ~85 bytes an object). index-pack's tables peak at 50-56 bytes an
 * object for SHA-1 (resolve/memory-plan.ts), and the first million's share covers the difference.
 */
const PER_MORE_OBJECT = 48;

/**
 * The ceiling when none is given, for work on `objects` objects: DEFAULT_MAX_MEMORY up to a
 * million, and 48 bytes more for each one past that (10M objects: 668 MiB), so that a pack of
 * many small objects is indexed on the threads asked for instead of on one.
 */
export function defaultMaxMemory(objects: number): number {
  return DEFAULT_MAX_MEMORY + PER_MORE_OBJECT * Math.max(0, objects - DEFAULT_OBJECTS);
}

/**
 * A ceiling as `--max-memory` and `packwright.maxMemory` state it: 0 (or less) means none, as 0
 * means unlimited for git's pack.windowMemory.
 */
export function ceilingFrom(bytes: number): number {
  return bytes <= 0 ? Infinity : bytes;
}

/**
 * The runtime before any work: `packwright index-pack --threads=1` of a 50-object pack peaks at
 * 54 MB (Node, the bundle, V8's heap), measured by /usr/bin/time.
 */
export const RUNTIME_BYTES = 56 << 20;

/**
 * Kept free for what the garbage collector has not given back yet: runs of the same plan peak a
 * few MB apart (index-pack of gitoxide.pack held whole at --threads=2: 250-255 MiB against 256
 * planned).
 */
export const SLACK_BYTES = 16 << 20;
