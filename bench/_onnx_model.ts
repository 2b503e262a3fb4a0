/**
 * Writes tiny ONNX models as protobuf bytes, for `capture_conformance.ts`:
 * one graph of nodes with typed, fixed-shape inputs, outputs and
 * initializers. Only the fields of `onnx.proto` these models need are written
 * (ModelProto: ir_version 1, graph 7, opset_import 8; GraphProto: node 1,
 * name 2, initializer 5, input 11, output 12; NodeProto: input 1, output 2,
 * name 3, op_type 4, attribute 5, domain 7; AttributeProto: name 1, f 2, i 3,
 * s 4, floats 7, ints 8, type 20; TensorProto: dims 1, data_type 2, name 8,
 * raw_data 9; ValueInfoProto, TypeProto.Tensor and TensorShapeProto).
 *
 * @module
 */

/** ONNX `TensorProto.DataType` values. */
export const DType = { float: 1, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9, float16: 10, uint32: 12 } as const;
/** An ONNX element type this writer knows. */
export type DTypeName = keyof typeof DType;

/** A node attribute: exactly one of the value fields. */
export interface Attr {
  readonly name: string;
  readonly f?: number;
  readonly i?: number;
  readonly s?: string;
  readonly floats?: readonly number[];
  readonly ints?: readonly number[];
}

/** A graph node. */
export interface Node {
  readonly op: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly attrs?: readonly Attr[];
  readonly domain?: string;
}

/** A typed tensor of a fixed shape (a graph output may leave its shape to inference). */
export interface TensorSpec {
  readonly name: string;
  readonly type: DTypeName;
  readonly shape?: readonly number[];
}

/** A graph's initializer: a tensor with its little-endian bytes. */
export interface Initializer extends TensorSpec {
  readonly shape: readonly number[];
  readonly raw: Uint8Array;
}

class ProtoWriter {
  readonly #b: number[] = [];

  varint(v: number | bigint): this {
    let x = BigInt.asUintN(64, BigInt(v));
    do {
      let byte = Number(x & 0x7fn);
      x >>= 7n;
      if (x !== 0n) byte |= 0x80;
      this.#b.push(byte);
    } while (x !== 0n);
    return this;
  }

  int(field: number, v: number | bigint): this {
    return this.varint(field << 3).varint(v);
  }

  bytes(field: number, data: Uint8Array): this {
    this.varint((field << 3) | 2).varint(data.length);
    for (const x of data) this.#b.push(x);
    return this;
  }

  str(field: number, s: string): this {
    return this.bytes(field, new TextEncoder().encode(s));
  }

  msg(field: number, m: ProtoWriter): this {
    return this.bytes(field, m.done());
  }

  f32(field: number, v: number): this {
    this.varint((field << 3) | 5);
    for (const x of new Uint8Array(new Float32Array([v]).buffer)) this.#b.push(x);
    return this;
  }

  done(): Uint8Array {
    return new Uint8Array(this.#b);
  }
}

function valueInfo(v: TensorSpec): ProtoWriter {
  const tensor = new ProtoWriter().int(1, DType[v.type]);
  if (v.shape !== undefined) {
    const shape = new ProtoWriter();
    for (const d of v.shape) shape.msg(1, new ProtoWriter().int(1, d));
    tensor.msg(2, shape);
  }
  return new ProtoWriter().str(1, v.name).msg(2, new ProtoWriter().msg(1, tensor));
}

function attribute(a: Attr): ProtoWriter {
  const w = new ProtoWriter().str(1, a.name);
  if (a.f !== undefined) return w.f32(2, a.f).int(20, 1);
  if (a.i !== undefined) return w.int(3, a.i).int(20, 2);
  if (a.s !== undefined) return w.str(4, a.s).int(20, 3);
  if (a.floats !== undefined) {
    for (const f of a.floats) w.f32(7, f);
    return w.int(20, 6);
  }
  if (a.ints !== undefined) {
    for (const i of a.ints) w.int(8, i);
    return w.int(20, 7);
  }
  throw new TypeError(`attribute ${a.name} has no value`);
}

/** The bytes of an ONNX model of one graph (default opset 17, plus com.microsoft 1). */
export function onnxModel(
  nodes: readonly Node[],
  inputs: readonly TensorSpec[],
  outputs: readonly TensorSpec[],
  initializers: readonly Initializer[] = [],
  opset = 17,
): Uint8Array {
  const g = new ProtoWriter();
  nodes.forEach((n, k) => {
    const w = new ProtoWriter();
    for (const i of n.inputs) w.str(1, i);
    for (const o of n.outputs) w.str(2, o);
    w.str(3, `node${k}`).str(4, n.op);
    for (const a of n.attrs ?? []) w.msg(5, attribute(a));
    if (n.domain !== undefined) w.str(7, n.domain);
    g.msg(1, w);
  });
  g.str(2, "graph");
  for (const t of initializers) {
    const w = new ProtoWriter();
    for (const d of t.shape) w.int(1, d);
    w.int(2, DType[t.type]).str(8, t.name).bytes(9, t.raw);
    g.msg(5, w);
  }
  for (const v of inputs) g.msg(11, valueInfo(v));
  for (const v of outputs) g.msg(12, valueInfo(v));
  return new ProtoWriter()
    .int(1, 8)
    .msg(8, new ProtoWriter().str(1, "").int(2, opset))
    .msg(8, new ProtoWriter().str(1, "com.microsoft").int(2, 1))
    .str(2, "denogpu-conformance")
    .msg(7, g)
    .done();
}
