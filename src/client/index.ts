// The client side of git's transport: reaching a server (a local path, file://, git://, smart
// HTTP) and what is asked of it: the refs a server has (listServerRefs, git ls-remote), a bare
// clone (cloneBare), a fetch into a repository (fetch), a push from one (push), and a partial
// clone's missing objects from its promisor remote (fetchMissing).
export { listServerRefs } from './list-server-refs.js';
export type { ListServerRefsOptions, ServerRef } from './list-server-refs.js';
export { openConnection, parseRemoteUrl } from './transport.js';
export type { ClientService, Connection, ConnectOptions, RemoteLocation } from './transport.js';
export { cloneBare } from './clone.js';
export type { CloneOptions, CloneResult } from './clone.js';
export { fetch } from './fetch.js';
export type { FetchOptions, FetchResult, FetchedRef, FetchedRefStatus } from './fetch.js';
export { readRemoteConfig, anonymizeUrl, displayUrl, defaultRemoteName } from './remote-config.js';
export type { RemoteConfig } from './remote-config.js';
export { push } from './push.js';
export type { PushOptions, PushResult, PushedRef, PushedRefStatus, RefspecError } from './push.js';
export type { PrePushUpdate } from './pre-push-hook.js';
export { readAdvertisement } from './advertisement.js';
export type { Advertisement, AdvertisedRef } from './advertisement.js';
export type { RemoteCallOptions, LocalRepositoryOptions, Credentials, AuthCallback } from './client-options.js';
export { configuredProtocol, extraHeaders, httpSettings, transportPolicy } from './remote-call-config.js';
export type { TransportPolicy } from './remote-call-config.js';
export { bypassesProxy } from './http-request.js';
export type { HttpSettings } from './http-request.js';
export type { ProxyAuthMethod } from './proxy-auth.js';
export { fetchMissing, promisorRemoteName } from './fetch-missing.js';
export type { FetchMissingOptions, FetchMissingResult } from './fetch-missing.js';
