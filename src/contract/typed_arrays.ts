/**
 * Element types of device memory: the typed arrays a handle remembers it was
 * made from (`Handle<Float32Array>`), the constructors reads take, and what a
 * handle made from some host data carries, in TypeScript and at run time.
 *
 * @module
 */

/** The typed arrays a handle's elements can be (`Handle<T extends TypedArray>`). */
export type TypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float16Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/**
 * A typed array constructor a read returns its bytes as: `Float32Array`,
 * `Uint32Array`, `Int32Array`, `Float16Array`, `BigInt64Array`... The
 * result views the bytes read, typed over an `ArrayBuffer`.
 */
export interface TypedArrayType<T> {
  /** Makes the array over `length` elements of `buffer` from `byteOffset`. */
  new (buffer: ArrayBuffer, byteOffset: number, length: number): T;
  /** Bytes per element. */
  readonly BYTES_PER_ELEMENT: number;
  /** The constructor's name, for messages. */
  readonly name: string;
}

/**
 * The element type a handle made from host data `D` carries (`create(data)`
 * returns a `Handle<ElementsOf<D>>`), as a read returns it, over an
 * `ArrayBuffer`: a typed array's own type (`Float32Array<ArrayBuffer>` for a
 * `Float32Array`), bytes (`Uint8Array<ArrayBuffer>`) for a `Uint8Array`,
 * `DataView` or `ArrayBuffer`, and any typed array (`TypedArray`) for a view
 * whose type is not known statically (an `ArrayBufferView`).
 */
export type ElementsOf<D> = D extends DataView | ArrayBuffer | SharedArrayBuffer ? Uint8Array<ArrayBuffer>
  : D extends Uint8Array ? Uint8Array<ArrayBuffer>
  : D extends Int8Array ? Int8Array<ArrayBuffer>
  : D extends Uint8ClampedArray ? Uint8ClampedArray<ArrayBuffer>
  : D extends Int16Array ? Int16Array<ArrayBuffer>
  : D extends Uint16Array ? Uint16Array<ArrayBuffer>
  : D extends Int32Array ? Int32Array<ArrayBuffer>
  : D extends Uint32Array ? Uint32Array<ArrayBuffer>
  : D extends Float16Array ? Float16Array<ArrayBuffer>
  : D extends Float32Array ? Float32Array<ArrayBuffer>
  : D extends Float64Array ? Float64Array<ArrayBuffer>
  : D extends BigInt64Array ? BigInt64Array<ArrayBuffer>
  : D extends BigUint64Array ? BigUint64Array<ArrayBuffer>
  : TypedArray;

/** `%TypedArray%.prototype[Symbol.toStringTag]`: a typed array's kind by name, subclasses and other realms included. */
const typedArrayTag = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype),
  Symbol.toStringTag,
)!.get! as (this: unknown) => string | undefined;

/** The constructors by name (`Float16Array` where the runtime has it). */
const CONSTRUCTORS: ReadonlyMap<string, TypedArrayType<TypedArray>> = new Map(
  [
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    (globalThis as { Float16Array?: TypedArrayType<TypedArray> }).Float16Array,
    Float32Array,
    Float64Array,
    BigInt64Array,
    BigUint64Array,
  ].filter((c) => c !== undefined).map((c) => [c.name, c as TypedArrayType<TypedArray>]),
);

/**
 * The element type of host data at run time, as `ElementsOf` says it in
 * TypeScript: a typed array's constructor, `Uint8Array` for anything else
 * (a `DataView`, an `ArrayBuffer`).
 *
 * @param data The host data.
 * @returns The constructor.
 */
export function elementTypeOf(data: unknown): TypedArrayType<TypedArray> {
  const name = ArrayBuffer.isView(data) ? typedArrayTag.call(data) : undefined;
  return (name === undefined ? undefined : CONSTRUCTORS.get(name)) ?? Uint8Array;
}
