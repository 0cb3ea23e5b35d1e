export { readLoose, readLooseHeader, readLooseHeaderLiterally, parseLooseHeader } from './read-loose.js';
export type { LooseObject, LooseHeader } from './read-loose.js';
export { writeLoose } from './write-loose.js';
export type { WriteLooseOptions } from './write-loose.js';
