import { PackwrightError } from '../errors/packwright-error.js';
import { decodeObjectText, signatureStart, splitObjectHeaders } from './object-headers.js';
import type { ObjectType } from './object-type.js';
import { formatPerson, parsePerson, type Person } from './person.js';

/** An annotated tag, parsed whole (ids as lowercase hex). */
export interface TagObject {
  id: string;
  /** The tagged object. */
  object: string;
  type: ObjectType;
  /** The tag's name (its `tag` line). */
  tag: string;
  /** Who tagged, and when (tags made before git 0.99 have none). */
  tagger?: Person | undefined;
  /** The message, without the signature. */
  message: string;
  /** The signature at the end of the message (OpenPGP, X.509 or SSH), from its BEGIN line on. */
  gpgsig?: string | undefined;
}

const TYPES = new Set(['commit', 'tree', 'blob', 'tag']);

/** Parses a tag's bytes; OBJECT_CORRUPT without an object line or a known type. */
export function parseTagObject(id: string, data: Uint8Array): TagObject {
  const { headers, message: body } = splitObjectHeaders(decodeObjectText(data).text);
  const one = (name: string): string | undefined => headers.find((h) => h.name === name)?.value;
  const object = one('object');
  const type = one('type');
  if (object === undefined || type === undefined || !TYPES.has(type)) throw new PackwrightError('OBJECT_CORRUPT', `tag ${id} lacks a valid object or type line`);
  const tagger = one('tagger');
  const at = signatureStart(body);
  return {
    id,
    object,
    type: type as ObjectType,
    tag: one('tag') ?? '',
    ...(tagger !== undefined ? { tagger: parsePerson(tagger) } : {}),
    message: at < 0 ? body : body.slice(0, at),
    ...(at >= 0 ? { gpgsig: body.slice(at) } : {}),
  };
}

/** What a new annotated tag is made of (`writeTag`): a TagObject without its id (the signature is appended to the message, as git appends it). */
export type NewTag = Omit<TagObject, 'id'>;

/** The bytes of a tag as git's mktag takes them: object, type, tag, tagger, a blank line, the message, then the signature. */
export function formatTagObject(t: NewTag): Buffer {
  let text = `object ${t.object}\ntype ${t.type}\ntag ${t.tag}\n`;
  if (t.tagger !== undefined) text += `tagger ${formatPerson(t.tagger)}\n`;
  return Buffer.from(`${text}\n${t.message}${t.gpgsig ?? ''}`, 'utf8');
}
