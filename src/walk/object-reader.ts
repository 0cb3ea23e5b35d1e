import { PackwrightError } from '../errors/packwright-error.js';
import { toHex } from '../hash/hex.js';
import { typeName, typeNumber } from '../objects/object-type.js';
import type { ObjectLocation, StoreHandle } from '../odb/store-handle.js';
import type { TreeSource } from './list-objects.js';
import type { ObjectTable } from './object-table.js';

/**
 * Reads the objects of a walk through a store handle, numbered in `table`: type-checked, and
 * noting whether each came from a promisor pack (what it names may then be missing). The commit
 * walk (RevWalk) and the workers of a parallel count read through it.
 */
export class ObjectReader implements TreeSource {
  /** Whether the object `readTyped` last found is in a promisor pack. */
  lastFromPromisor = false;

  constructor(
    readonly objects: StoreHandle,
    readonly table: ObjectTable,
  ) {}

  get hashLength(): number {
    return this.objects.hashLength;
  }

  /** Called for an object the store lacks (the walk notes it). */
  protected absent(n: number): void {
    void n;
  }

  /**
   * Reads object `n`, checking it has type `want` (-1: any); undefined when the store lacks it. An
   * object of another type than the walk expected is OBJECT_CORRUPT (git: "object is a tree, not a
   * commit"). A transient read's data is the store's buffer until its next read: parse it, or copy it.
   */
  readTyped(n: number, want: number, transient = false): { type: number; data: Buffer } | undefined {
    const location = this.objects.locate(this.table.id(n));
    if (location === undefined) {
      this.absent(n);
      return undefined;
    }
    return this.readTypedAt(n, location, want, transient);
  }

  /** `readTyped` of an object already located. */
  readTypedAt(n: number, location: ObjectLocation, want: number, transient = false): { type: number; data: Buffer } {
    const t = this.table;
    this.lastFromPromisor = location.kind === 'pack' && location.pack.markers.promisor;
    const obj = transient ? this.objects.readTransientAt(location) : this.objects.readAt(location);
    const type = typeNumber(obj.type);
    if (want >= 0 && type !== want) {
      throw new PackwrightError('OBJECT_CORRUPT', `object ${toHex(t.id(n))} is a ${obj.type}, not a ${typeName(want)}`);
    }
    if (t.types[n] === 0 || want < 0) t.types[n] = type;
    return { type, data: obj.data };
  }
}
