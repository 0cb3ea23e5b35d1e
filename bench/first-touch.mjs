// node bench/first-touch.mjs: the cost of the first write to fresh memory against a write to memory
// already touched (the figure memory/index.ts states). Median of 7 runs per size.
const MB = 1 << 20;
for (const size of [4 * MB, 16 * MB, 64 * MB]) {
  const fresh = [], again = [];
  for (let r = 0; r < 7; r++) {
    let t = performance.now();
    const b = Buffer.allocUnsafeSlow(size);
    for (let p = 0; p < size; p += 4096) b[p] = 1;
    fresh.push(performance.now() - t);
    t = performance.now();
    for (let p = 0; p < size; p += 4096) b[p] = 2;
    again.push(performance.now() - t);
  }
  fresh.sort((a, b) => a - b); again.sort((a, b) => a - b);
  const f = fresh[3], a = again[3];
  console.log(`${size / MB} MiB: first touch ${f.toFixed(2)} ms (${(f * 1e6 / size).toFixed(2)} ns/byte, ${(f * 1e3 / (size / 4096)).toFixed(1)} us/page), again ${a.toFixed(2)} ms`);
}
