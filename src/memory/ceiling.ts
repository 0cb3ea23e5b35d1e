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
