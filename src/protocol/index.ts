// The git wire protocol's framing, shared by upload-pack, receive-pack and the client: pkt-lines,
// side bands, capability lists.
export { DataPacket, PacketReader, PacketWriter, streamSink, encodePacket, FLUSH_PACKET, DELIM_PACKET, RESPONSE_END_PACKET, LARGE_PACKET_MAX, LARGE_PACKET_DATA_MAX, DEFAULT_PACKET_MAX } from './pkt-line.js';
export type { Packet, ByteSink } from './pkt-line.js';
export { sidebandFrames, bandSink, BAND_DATA, BAND_PROGRESS, BAND_ERROR } from './sideband.js';
export type { SidebandSize } from './sideband.js';
export { advertisedAgent, parseCapabilities, requestedProtocolVersion } from './capabilities.js';
