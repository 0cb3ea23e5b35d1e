/**
 * Commits by committer date, newest first, and in the order pushed among equal dates (git's
 * commit_list_insert_by_date puts a commit after those of its date). A binary heap on
 * (date, sequence).
 */
export class DateQueue {
  private items: number[] = [];
  private times: number[] = [];
  private seqs: number[] = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  push(n: number, time: number): void {
    const s = this.seq++;
    this.items.push(n);
    this.times.push(time);
    this.seqs.push(s);
    let i = this.items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(time, s, this.times[parent] as number, this.seqs[parent] as number)) break;
      this.move(i, parent);
      i = parent;
    }
    this.place(i, n, time, s);
  }

  /** Whether a queued commit satisfies `test`. */
  some(test: (n: number) => boolean): boolean {
    return this.items.some(test);
  }

  peekTime(): number {
    return this.times[0] as number;
  }

  pop(): number {
    const times = this.times;
    const seqs = this.seqs;
    const top = this.items[0] as number;
    const n = this.items.pop() as number;
    const time = times.pop() as number;
    const s = seqs.pop() as number;
    const size = this.items.length;
    if (size === 0) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= size) break;
      const right = child + 1;
      if (right < size && this.before(times[right] as number, seqs[right] as number, times[child] as number, seqs[child] as number)) child = right;
      if (!this.before(times[child] as number, seqs[child] as number, time, s)) break;
      this.move(i, child);
      i = child;
    }
    this.place(i, n, time, s);
    return top;
  }

  /** Heap slot `to` takes what slot `from` holds. */
  private move(to: number, from: number): void {
    this.place(to, this.items[from] as number, this.times[from] as number, this.seqs[from] as number);
  }

  private place(i: number, n: number, time: number, s: number): void {
    this.items[i] = n;
    this.times[i] = time;
    this.seqs[i] = s;
  }

  private before(t1: number, s1: number, t2: number, s2: number): boolean {
    return t1 > t2 || (t1 === t2 && s1 < s2);
  }
}
