import type { GitConfig } from '../config/index.js';
import { PackwrightError } from '../errors/packwright-error.js';
import type { StoreHandle } from '../odb/store-handle.js';
import { ConsecutiveNegotiator } from './consecutive-negotiator.js';
import { SkippingNegotiator } from './skipping-negotiator.js';

/**
 * What a fetch offers as `have`s, and what it learns from the server's ACKs (git's struct
 * fetch_negotiator). The fetch tells it first the server's refs that this repository has
 * (`knownCommon`), then its own refs or negotiation tips (`addTip`), then asks for haves.
 */
export interface Negotiator {
  /** A ref the server advertised that this repository has: the server has it too. */
  knownCommon(id: Uint8Array): void;
  /** A local ref (or negotiation tip): its history is what may be offered. */
  addTip(id: Uint8Array): void;
  /** The next commit to offer (hex), or undefined when nothing is left worth offering. */
  next(): string | undefined;
  /** The server acknowledged `hex` as common: true when that was news (git's ack returned 0). */
  ack(hex: string): boolean;
}

/** git's noop negotiator: no haves at all (the server sends everything the wants reach). */
export class NoopNegotiator implements Negotiator {
  knownCommon(): void {}
  addTip(): void {}
  next(): undefined {
    return undefined;
  }
  ack(): boolean {
    return false;
  }
}

/**
 * The negotiator git's fetch would use here (fetch_negotiator_init, repo-settings.c):
 * fetch.negotiationAlgorithm `skipping`, `noop`, `consecutive`, or `default` (consecutive, or
 * skipping under feature.experimental, as when it is unset); anything else is refused as git dies.
 */
export function createNegotiator(config: GitConfig, objects: StoreHandle, shallow: readonly Uint8Array[] = []): Negotiator {
  const fallback = config.getBool('feature.experimental') === true ? 'skipping' : 'consecutive';
  const value = config.get('fetch.negotiationalgorithm');
  let algorithm = fallback;
  if (typeof value === 'string') {
    const v = value.toLowerCase();
    if (v === 'skipping' || v === 'noop' || v === 'consecutive') algorithm = v;
    else if (v !== 'default') throw new PackwrightError('CONFIG_INVALID', `unknown fetch negotiation algorithm '${value}'`);
  }
  if (algorithm === 'noop') return new NoopNegotiator();
  return algorithm === 'skipping' ? new SkippingNegotiator(objects, shallow) : new ConsecutiveNegotiator(objects, shallow);
}

/** Up to `count` commits to offer next (a round's haves): fewer when nothing more is worth offering. */
export function takeHaves(negotiator: Negotiator, count: number): string[] {
  const out: string[] = [];
  while (out.length < count) {
    const h = negotiator.next();
    if (h === undefined) break;
    out.push(h);
  }
  return out;
}
