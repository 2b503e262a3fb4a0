/**
 * The conformance corpus: compute dispatches captured from real WebGPU
 * clients (ONNX Runtime Web's two WebGPU execution providers and
 * TensorFlow.js's WebGPU backend, by `bench/capture_conformance.ts`), each
 * with its WGSL, entry point,
 * constants, bindings, workgroup count and the bytes of every bound buffer
 * range before and after the dispatch.
 *
 * On disk: `corpus.json` (this module's {@linkcode CorpusIndex}: shaders
 * deduplicated, dispatches referring to them by index) and `corpus.bin`, the
 * deduplicated byte blobs the index points into, both gzip-compressed
 * (`corpus.json.gz`, `corpus.bin.gz`).
 *
 * @module
 */

/** How a dispatch's binding is declared in the client's bind group layout. */
export type BindingType = "uniform" | "storage" | "read-only-storage";

/** The scalar a binding's WGSL array holds, as far as comparing bytes needs it. */
export type ElementKind = "f32" | "f16" | "i32" | "u32" | "other";

/** A tolerance for the f32 elements of a dispatch's writable bindings, and why. */
export interface Tolerance {
  /** Units in the last place allowed between result and capture. */
  readonly ulps: number;
  /** Absolute difference always allowed (results near zero, where ULPs are tiny). */
  readonly abs: number;
  /** Why exact bytes cannot be required. */
  readonly reason: string;
}

/** One bound buffer range. */
export interface CorpusBinding {
  readonly group: number;
  readonly binding: number;
  readonly type: BindingType;
  /** Its WGSL variable, and the element kind of its type. */
  readonly name: string;
  readonly element: ElementKind;
  /** Indices into {@linkcode CorpusIndex.blobs}: the range's bytes before and after the dispatch. */
  readonly before: number;
  readonly after: number;
}

/** One captured dispatch. */
export interface CorpusDispatch {
  /** Unique: `<ep>/<case>/<n>` (n counts the case's dispatches from 0). */
  readonly id: string;
  /** Which client produced it: ORT's native WebGPU EP (`webgpu`), ORT's JavaScript EP (`jsep`), or tfjs (`tfjs`). */
  readonly ep: string;
  /** The operator the case exercises (ONNX's name, or tfjs's kernel name), and the case's name. */
  readonly op: string;
  readonly case: string;
  /** The label the client gave the pipeline (its program name), or "". */
  readonly program: string;
  /** Index into {@linkcode CorpusIndex.shaders}. */
  readonly shader: number;
  readonly entryPoint: string;
  readonly constants: Readonly<Record<string, number>>;
  readonly workgroups: readonly [number, number, number];
  /** In (group, binding) order. */
  readonly bindings: readonly CorpusBinding[];
  /** Features the shader enables (`shader-f16` for `enable f16;`). */
  readonly features: readonly string[];
  /** Absent: the bytes must match exactly. */
  readonly tolerance?: Tolerance;
}

/** `corpus.json`. */
export interface CorpusIndex {
  readonly format: 1;
  /**
   * Where it came from: the clients (packages and versions), the adapter's description and features
   * (`adapterFeatures`, sorted, comma-separated), `DENO_WEBGPU_BACKEND`, Deno, the date and the command.
   */
  readonly source: Readonly<Record<string, string>>;
  readonly shaders: readonly string[];
  /** `[offset, length]` of each blob in `corpus.bin`. */
  readonly blobs: readonly (readonly [number, number])[];
  readonly dispatches: readonly CorpusDispatch[];
}

/** A corpus read into memory. */
export interface Corpus {
  readonly index: CorpusIndex;
  /** The bytes of blob `i`. */
  blob(i: number): Uint8Array;
}

/** The folder of the committed corpus. */
export const CORPUS_DIR: URL = new URL("./", import.meta.url);

async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Compresses bytes with gzip. */
export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Reads `corpus.json.gz` and `corpus.bin.gz` from a folder. */
export async function readCorpus(dir: URL = CORPUS_DIR): Promise<Corpus> {
  const [json, bin] = await Promise.all([
    Deno.readFile(new URL("corpus.json.gz", dir)).then(gunzip),
    Deno.readFile(new URL("corpus.bin.gz", dir)).then(gunzip),
  ]);
  const index = JSON.parse(new TextDecoder().decode(json)) as CorpusIndex;
  if (index.format !== 1) throw new Error(`corpus format ${String(index.format)} is not 1`);
  return {
    index,
    blob(i: number): Uint8Array {
      const b = index.blobs[i];
      if (b === undefined) throw new RangeError(`corpus: no blob ${i}`);
      return bin.subarray(b[0], b[0] + b[1]);
    },
  };
}

/** Builds a corpus' blobs, each distinct content stored once. */
export class BlobWriter {
  #chunks: Uint8Array[] = [];
  #blobs: [number, number][] = [];
  #byHash = new Map<string, number>();
  #size = 0;

  /** Adds bytes, returning the index of the blob holding them. */
  async add(bytes: Uint8Array): Promise<number> {
    const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
    const key = `${bytes.length}:${Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("")}`;
    const seen = this.#byHash.get(key);
    if (seen !== undefined) return seen;
    const i = this.#blobs.length;
    this.#blobs.push([this.#size, bytes.length]);
    this.#chunks.push(bytes.slice());
    this.#size += bytes.length;
    this.#byHash.set(key, i);
    return i;
  }

  /** The index entries. */
  get blobs(): readonly (readonly [number, number])[] {
    return this.#blobs;
  }

  /** All blobs, concatenated. */
  bytes(): Uint8Array {
    const out = new Uint8Array(this.#size);
    let at = 0;
    for (const c of this.#chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}

/** The element kind of a WGSL store type (`array<vec4<f32>>`, `array<i32, 4>`, a struct name: "other"). */
export function elementKind(type: string): ElementKind {
  const t = type.replace(/\s+/g, "");
  const m = /^(?:array<)*(?:vec[234]<)?(f32|f16|i32|u32)\b/.exec(t) ??
    /^(?:array<)*vec[234](f|h|i|u)\b/.exec(t);
  if (m === null) return "other";
  const k = m[1]!;
  return ({ f: "f32", h: "f16", i: "i32", u: "u32" } as Record<string, ElementKind>)[k] ?? (k as ElementKind);
}
