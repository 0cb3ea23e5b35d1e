// Side-band multiplexing (gitprotocol-pack, "side-band, side-band-64k"): once the pack starts, every
// packet's first byte says what it carries: 1 pack data, 2 progress text, 3 a fatal error.
import { Buffer } from 'node:buffer';
import { DEFAULT_PACKET_MAX, LARGE_PACKET_MAX, type ByteSink } from './pkt-line.js';

/** Side band 1: the pack (or the answer). */
export const BAND_DATA = 1;
/** Side band 2: progress and messages for the user. */
export const BAND_PROGRESS = 2;
/** Side band 3: a fatal error; the conversation ends. */
export const BAND_ERROR = 3;

/** Packet sizes of the two capabilities: `side-band` (1000 bytes) and `side-band-64k` (65520). */
export type SidebandSize = typeof DEFAULT_PACKET_MAX | typeof LARGE_PACKET_MAX;

/**
 * Frames `data` on `band` in packets of at most `packetMax` bytes (git's send_sideband), as one
 * buffer. Without a side band (`packetMax` 0) the bytes go as they are.
 */
export function sidebandFrames(band: number, data: Uint8Array, packetMax: number): Buffer {
  if (packetMax === 0) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return sidebandFramesInto(Buffer.allocUnsafe(framedLength(data.length, packetMax)), band, data, packetMax);
}

/** The length of `length` bytes framed in packets of at most `packetMax` (a side band's). */
export function framedLength(length: number, packetMax: number): number {
  return length + 5 * Math.ceil(length / (packetMax - 5));
}

/** `sidebandFrames` into `out` (at least `framedLength` long), for a caller that reuses its buffers; a view of `out`. */
export function sidebandFramesInto(out: Buffer, band: number, data: Uint8Array, packetMax: number): Buffer {
  const room = packetMax - 5;
  let o = 0;
  for (let i = 0; i < data.length; i += room) {
    const n = Math.min(room, data.length - i);
    out.write((n + 5).toString(16).padStart(4, '0'), o, 'latin1');
    out[o + 4] = band;
    out.set(data.subarray(i, i + n), o + 5);
    o += n + 5;
  }
  return out.subarray(0, o);
}

/** A sink that frames what it is given on one band of another sink. */
export function bandSink(sink: ByteSink, band: number, packetMax: number): ByteSink {
  return (chunk) => sink(sidebandFrames(band, chunk, packetMax));
}
