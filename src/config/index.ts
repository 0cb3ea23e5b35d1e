export { configFromEnvironment, GitConfig, normalizeKey, parseBool, parseConfigInt } from './git-config.js';
export type { ConfigEntry, ConfigReadOptions } from './git-config.js';
export { COLOR_RESET, parseColor, slotColor, wantColor } from './color.js';
export { wildmatch } from './wildmatch.js';
export type { WildmatchOptions } from './wildmatch.js';
export { urlMatchedValue, urlMatchedValues } from './url-match.js';
export type { UrlMatchOptions } from './url-match.js';
