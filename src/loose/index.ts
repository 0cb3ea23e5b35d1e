export { readLoose, readLooseHeader, parseLooseHeader } from './read-loose.js';
export type { LooseObject, LooseHeader } from './read-loose.js';
