/**
 * Memory that is reused instead of allocated: arenas for object buffers (`BuddyAllocator`) and a
 * pool of them for the resolver (`BufferPool`).
 *
 * Why reuse matters, the one statement of it in this code base: the first write to each 4 KiB page
 * of fresh memory is a page fault in which the kernel zeroes the page; a write to a page already
 * touched costs almost nothing. `node bench/first-touch.mjs` measures both:
 * - the machines of the first sessions: 2.5-4.5 ns a byte of fresh memory (17-22 µs a page; 0.5 s
 *   to read a 111 MB pack into a new buffer, 32 ms to read a 6.3 MB index);
 * - the machine of 2026-12-01: 0.3 ns a byte (1.3 µs a page), against ~0.005 ns a byte to write
 *   the same buffer again.
 * The ratio, not the absolute figure, is what the design rests on: decoding 1.85 GB of objects
 * into fresh buffers costs seconds that reused blocks avoid, and a buffer that is freed only by
 * the garbage collector adds to peak RSS until it runs. Comments elsewhere refer here as
 * "first-touch cost".
 */
export { BuddyAllocator } from './buddy-allocator.js';
export { BufferPool } from './buffer-pool.js';
