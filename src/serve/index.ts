// Serving repositories: upload-pack (clones and fetches) over protocol v0, v1 and v2, and
// receive-pack (pushes), on any byte stream (stdio, a socket, an HTTP request body).
export { uploadPack } from './upload-pack.js';
export type { UploadPackOptions } from './upload-pack.js';
export { uploadPackConfig } from './upload-pack-config.js';
export type { UploadPackConfig } from './upload-pack-config.js';
export { receivePack } from './receive-pack.js';
export type { ReceivePackOptions, ReceiveCommand, ReceiveCommandResult, PendingPush } from './receive-pack.js';
export { receivePackConfig } from './receive-pack-config.js';
export type { ReceivePackConfig, DenyAction } from './receive-pack-config.js';
export { serveGitDaemonConnection } from './git-daemon.js';
export type { GitDaemonOptions } from './git-daemon.js';
export { serveSmartHttp } from './smart-http.js';
export type { Authorization, GitHttpRequest, GitHttpResponse, GitService, Pusher, SmartHttpOptions } from './smart-http.js';
export { createGitHttpHandler } from './http-handler.js';
export { PackSlots } from './pack-slots.js';
