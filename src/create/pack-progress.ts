import { Progress, type ProgressOutput } from '../progress/progress.js';
import type { CreatePackPhase, CreatePackStats } from './create-pack-options.js';

const TITLES = { counting: 'Enumerating objects', compressing: 'Compressing objects', writing: 'Writing objects' } as const;

/**
 * The progress git's pack-objects shows while making a pack, from createPack's `onProgress`:
 * "Enumerating objects: N, done.", "Counting objects: 100% (N/N), done.", "Delta compression
 * using up to T threads", "Compressing objects: …", "Writing objects: …", then `total`'s "Total
 * N (delta D), reused R (delta RD), pack-reused P". The pack-objects command writes it to stderr,
 * upload-pack to the client's side band 2.
 */
export class PackProgress {
  private readonly bar: Progress;
  private counted = -1;
  private announced = false;

  /**
   * `writing`: show "Writing objects" too. git shows it for a pack written to a file, and for one
   * written to stdout only at --all-progress (or --all-progress-implied with progress on, as
   * send-pack asks): upload-pack's client never sees it.
   */
  constructor(private readonly output: ProgressOutput, private readonly enabled: boolean, private readonly threads: number, private readonly writing = true) {
    this.bar = new Progress(enabled, output);
  }

  /** Reports progress of a phase of `createPack` (pass it as createPack's `onProgress`). */
  readonly onProgress = (phase: CreatePackPhase, done: number, total: number, bytes?: number): void => {
    const bar = this.bar;
    if (phase === 'counting') {
      // git: "Enumerating objects: N, done." while walking, then "Counting objects: 100% (N/N)".
      bar.update(TITLES.counting, done, 0);
      if (total > 0) this.counted = total;
      return;
    }
    if (this.counted >= 0) {
      bar.finish();
      bar.finishWith('Counting objects', this.counted);
      this.counted = -1;
    }
    if (phase === 'writing' && !this.writing) {
      bar.finish();
      return;
    }
    if (phase === 'compressing' && !this.announced && this.enabled) {
      this.output.write(`Delta compression using up to ${this.threads} threads\n`);
      this.announced = true;
    }
    bar.update(TITLES[phase], done, total, phase === 'writing' ? bytes : undefined);
  };

  /** Ends the line in progress. */
  finish(): void {
    this.bar.finish();
  }

  /** git's summary line (counting what reuse of a bitmapped pack sent apart, as git's pack-reused). */
  total(s: CreatePackStats): void {
    if (!this.enabled) return;
    const deltas = s.copiedDeltas + s.thinDeltas + s.newDeltas + s.newThinDeltas;
    const reused = s.copied + s.copiedDeltas + s.thinDeltas + s.verbatim - s.packReused;
    const reusedDeltas = s.copiedDeltas + s.thinDeltas - s.packReusedDeltas;
    this.output.write(`Total ${s.objects} (delta ${deltas - s.packReusedDeltas}), reused ${reused} (delta ${reusedDeltas}), pack-reused ${s.packReused}\n`);
  }
}
