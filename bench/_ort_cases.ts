/**
 * The ONNX models `capture_conformance.ts` runs through ONNX Runtime
 * Web's WebGPU execution providers: one small graph per case, most of one
 * operator, with small shapes (the software adapter stops an invocation after
 * 65535 loop iterations, and the corpus is committed).
 *
 * Inputs are multiples of 1/8 in [-2, 2] (or (0, 4] where an operator needs
 * positive values): products and sums of them are exact in f32, so the bytes
 * of MatMul, Conv, Gemm and sum reductions do not depend on summation order
 * or on fused multiply-adds, and those cases need no tolerance. A case whose
 * operator rounds in ways WGSL leaves to the implementation (exp, log, tanh,
 * division, square roots) states its tolerance and the reason.
 *
 * @module
 */

import type { Attr, DTypeName, Node, TensorSpec } from "./_onnx_model.ts";

/** How a tensor's values are drawn. */
export type Gen =
  | "signed" // k/8 in [-2, 2]
  | "positive" // k/8 in (0, 4]
  | "int" // integers in [-5, 5]
  | "bool"
  | { readonly index: number } // integers in [0, index)
  | { readonly values: readonly number[] };

/** A graph input (fed each run) or an initializer, with its values. */
export interface CaseTensor extends TensorSpec {
  readonly shape: readonly number[];
  readonly gen: Gen;
}

/** What a case allows on the f32 results of its dispatches, and why. */
export interface CaseTolerance {
  readonly ulps: number;
  readonly abs: number;
  readonly reason: string;
}

/** One model. */
export interface OrtCase {
  /** Unique, a file-name-safe word. */
  readonly name: string;
  /** The operator it exercises. */
  readonly op: string;
  readonly nodes: readonly Node[];
  readonly inputs: readonly CaseTensor[];
  readonly initializers?: readonly CaseTensor[];
  readonly outputs: readonly TensorSpec[];
  readonly opset?: number;
  readonly tolerance?: CaseTolerance;
}

/** The tolerance of a case whose shader evaluates `fns`: WGSL leaves their accuracy to the implementation. */
export const TRANSCENDENTAL = (fns: string): CaseTolerance => ({
  ulps: 256,
  abs: 1e-5,
  reason: `the shader evaluates ${fns}, whose accuracy WGSL leaves to the implementation: a GPU other than the ` +
    `capture's rounds differently`,
});
/** The tolerance of a case whose shader does `what`: division and square roots may be off by 2.5 ULP, fused multiply-adds round once. */
export const ROUNDING = (what: string): CaseTolerance => ({
  ulps: 16,
  abs: 1e-6,
  reason: `the shader ${what}; WGSL allows division and square roots 2.5 ULP and lets a compiler contract ` +
    `a * b + c into a fused multiply-add, so another GPU may round the last bits differently`,
});

/**
 * The tolerance of a case whose shader sums `terms` weighted products: every product and partial sum rounds, in an
 * order and with fused multiply-adds the compiler chooses, so the error grows with the terms.
 */
export const SUMMED = (what: string, observed: string): CaseTolerance => ({
  ulps: 64,
  abs: 4e-6,
  reason: `the shader ${what}: every product and partial sum rounds, in an order and with fused multiply-adds the ` +
    `compiler chooses, so another GPU may differ in more than the last bits (${observed})`,
});

const f = (name: string, shape: readonly number[], gen: Gen = "signed"): CaseTensor => ({
  name,
  type: "float",
  shape,
  gen,
});
const t = (name: string, type: DTypeName, shape: readonly number[], gen: Gen): CaseTensor => ({
  name,
  type,
  shape,
  gen,
});
const i64 = (name: string, values: readonly number[]): CaseTensor => ({
  name,
  type: "int64",
  shape: [values.length],
  gen: { values },
});
const out = (name = "y", type: DTypeName = "float"): TensorSpec => ({ name, type });
const node = (op: string, inputs: readonly string[], attrs: readonly Attr[] = [], outputs = ["y"], domain?: string) =>
  ({ op, inputs, outputs, attrs, domain }) as Node;

function unary(op: string, gen: Gen, tolerance?: CaseTolerance, attrs: Attr[] = [], opset?: number): OrtCase {
  return {
    name: op,
    op,
    nodes: [node(op, ["x"], attrs)],
    inputs: [f("x", [2, 3, 5], gen)],
    outputs: [out()],
    tolerance,
    opset,
  };
}

function binary(
  op: string,
  name: string,
  a: readonly number[],
  b: readonly number[],
  opts: { type?: DTypeName; outType?: DTypeName; genA?: Gen; genB?: Gen; tolerance?: CaseTolerance } = {},
): OrtCase {
  const type = opts.type ?? "float";
  const def: Gen = type === "float" ? "signed" : type === "bool" ? "bool" : "int";
  return {
    name,
    op,
    nodes: [node(op, ["a", "b"])],
    inputs: [t("a", type, a, opts.genA ?? def), t("b", type, b, opts.genB ?? def)],
    outputs: [out("y", opts.outType ?? type)],
    tolerance: opts.tolerance,
  };
}

const ELEMENTWISE: OrtCase[] = [
  binary("Add", "Add_row_broadcast", [2, 3, 4], [4]),
  binary("Add", "Add_same_shape", [4, 8], [4, 8]),
  binary("Add", "Add_int32", [2, 3], [3], { type: "int32" }),
  binary("Sub", "Sub_both_broadcast", [2, 1, 4], [3, 1]),
  binary("Mul", "Mul_scalar", [3, 5], [1]),
  binary("Mul", "Mul_int32", [2, 6], [2, 1], { type: "int32" }),
  binary("Div", "Div_broadcast", [2, 3, 4], [3, 1], { genB: "positive", tolerance: ROUNDING("divides") }),
  binary("Pow", "Pow", [2, 3], [3], {
    genA: "positive",
    genB: { values: [0, 2, 0.5] },
    tolerance: TRANSCENDENTAL("pow"),
  }),
  binary("PRelu", "PRelu_channel_slope", [2, 3, 4], [4]),
  binary("Equal", "Equal", [2, 3, 4], [4], { type: "int32", outType: "bool" }),
  binary("Less", "Less_broadcast", [2, 3, 4], [3, 1], { outType: "bool" }),
  binary("Greater", "Greater", [3, 4], [3, 4], { outType: "bool" }),
  binary("GreaterOrEqual", "GreaterOrEqual", [2, 6], [6], { outType: "bool" }),
  binary("LessOrEqual", "LessOrEqual", [2, 6], [1], { outType: "bool" }),
  binary("And", "And", [2, 8], [8], { type: "bool" }),
  binary("Or", "Or", [4, 4], [4, 4], { type: "bool" }),
  binary("Xor", "Xor", [3, 4], [1, 4], { type: "bool" }),
  {
    name: "Max_three_inputs",
    op: "Max",
    nodes: [node("Max", ["a", "b", "c"])],
    inputs: [f("a", [2, 3, 4]), f("b", [4]), f("c", [3, 1])],
    outputs: [out()],
  },
  {
    name: "Min_two_inputs",
    op: "Min",
    nodes: [node("Min", ["a", "b"])],
    inputs: [f("a", [2, 3, 4]), f("b", [2, 1, 4])],
    outputs: [out()],
  },
  {
    name: "Where_broadcast",
    op: "Where",
    nodes: [node("Where", ["c", "a", "b"])],
    inputs: [t("c", "bool", [2, 1, 4], "bool"), f("a", [2, 3, 4]), f("b", [4])],
    outputs: [out()],
  },
  {
    name: "Clip_min_max",
    op: "Clip",
    nodes: [node("Clip", ["x", "lo", "hi"])],
    inputs: [f("x", [3, 7])],
    initializers: [t("lo", "float", [], { values: [-0.5] }), t("hi", "float", [], { values: [1.25] })],
    outputs: [out()],
  },
  unary("Abs", "signed"),
  unary("Neg", "signed"),
  unary("Relu", "signed"),
  unary("Floor", { values: [-1.75, -0.5, 0.25, 1.5, 2.75, -2, 0, 1.125] }),
  unary("Ceil", "signed"),
  unary("Round", { values: [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.375, -1.625] }),
  unary("Sign", "signed"),
  unary("Reciprocal", "positive", ROUNDING("divides")),
  unary("Sqrt", "positive", ROUNDING("takes square roots")),
  unary("Exp", "signed", TRANSCENDENTAL("exp")),
  unary("Log", "positive", TRANSCENDENTAL("log")),
  unary("Sigmoid", "signed", TRANSCENDENTAL("exp")),
  unary("Tanh", "signed", TRANSCENDENTAL("tanh")),
  unary("Erf", "signed", TRANSCENDENTAL("exp (ORT's erf approximation)")),
  unary("Sin", "signed", TRANSCENDENTAL("sin")),
  unary("Cos", "signed", TRANSCENDENTAL("cos")),
  unary("Elu", "signed", TRANSCENDENTAL("exp"), [{ name: "alpha", f: 0.5 }]),
  unary("LeakyRelu", "signed", undefined, [{ name: "alpha", f: 0.125 }]),
  unary("HardSigmoid", "signed", ROUNDING("computes alpha * x + beta"), [
    { name: "alpha", f: 0.25 },
    { name: "beta", f: 0.5 },
  ]),
  unary("Gelu", "signed", TRANSCENDENTAL("erf"), [], 20),
  {
    name: "Not",
    op: "Not",
    nodes: [node("Not", ["x"])],
    inputs: [t("x", "bool", [3, 5], "bool")],
    outputs: [out("y", "bool")],
  },
  {
    name: "Cast_float_to_int32",
    op: "Cast",
    nodes: [node("Cast", ["x"], [{ name: "to", i: 6 }])],
    inputs: [f("x", [3, 5])],
    outputs: [out("y", "int32")],
  },
  {
    name: "Cast_int32_to_float",
    op: "Cast",
    nodes: [node("Cast", ["x"], [{ name: "to", i: 1 }])],
    inputs: [t("x", "int32", [3, 5], "int")],
    outputs: [out("y", "float")],
  },
  {
    name: "Cast_float_to_bool",
    op: "Cast",
    nodes: [node("Cast", ["x"], [{ name: "to", i: 9 }])],
    inputs: [f("x", [2, 8], "int")],
    outputs: [out("y", "bool")],
  },
  {
    name: "Cast_float16_round_trip",
    op: "Cast",
    nodes: [node("Cast", ["x"], [{ name: "to", i: 10 }], ["h"]), node("Cast", ["h"], [{ name: "to", i: 1 }])],
    inputs: [f("x", [2, 8])],
    outputs: [out()],
  },
];

function reduce(op: string, name: string, attrs: Attr[], tolerance?: CaseTolerance, gen: Gen = "signed"): OrtCase {
  return { name, op, nodes: [node(op, ["x"], attrs)], inputs: [f("x", [2, 3, 4], gen)], outputs: [out()], tolerance };
}

const REDUCTIONS: OrtCase[] = [
  {
    name: "ReduceSum_axis1_keepdims",
    op: "ReduceSum",
    nodes: [node("ReduceSum", ["x", "axes"], [{ name: "keepdims", i: 1 }])],
    inputs: [f("x", [2, 3, 4])],
    initializers: [i64("axes", [1])],
    outputs: [out()],
  },
  {
    name: "ReduceSum_last_axis",
    op: "ReduceSum",
    nodes: [node("ReduceSum", ["x", "axes"], [{ name: "keepdims", i: 0 }])],
    inputs: [f("x", [4, 16])],
    initializers: [i64("axes", [-1])],
    outputs: [out()],
  },
  reduce(
    "ReduceMean",
    "ReduceMean_last_axis",
    [{ name: "axes", ints: [2] }, { name: "keepdims", i: 0 }],
    ROUNDING("divides a sum by its count"),
  ),
  reduce("ReduceMax", "ReduceMax_two_axes", [{ name: "axes", ints: [0, 2] }]),
  reduce("ReduceMin", "ReduceMin_all", [{ name: "keepdims", i: 0 }]),
  reduce("ReduceProd", "ReduceProd_axis1", [{ name: "axes", ints: [1] }], undefined, {
    values: [1, -0.5, 2, 0.25, -1, 1.5],
  }),
  reduce("ReduceL2", "ReduceL2_axis2", [{ name: "axes", ints: [2] }], ROUNDING("takes square roots")),
  reduce("ReduceSumSquare", "ReduceSumSquare_axis0", [{ name: "axes", ints: [0] }]),
  reduce("ReduceLogSumExp", "ReduceLogSumExp_axis2", [{ name: "axes", ints: [2] }], TRANSCENDENTAL("exp and log")),
  {
    name: "ArgMax_axis1",
    op: "ArgMax",
    nodes: [node("ArgMax", ["x"], [{ name: "axis", i: 1 }, { name: "keepdims", i: 0 }])],
    inputs: [f("x", [2, 5, 3])],
    outputs: [out("y", "int64")],
  },
  {
    name: "ArgMin_last_axis",
    op: "ArgMin",
    nodes: [node("ArgMin", ["x"], [{ name: "axis", i: -1 }])],
    inputs: [f("x", [3, 6])],
    outputs: [out("y", "int64")],
  },
  {
    name: "CumSum_axis1",
    op: "CumSum",
    nodes: [node("CumSum", ["x", "axis"])],
    inputs: [f("x", [3, 5])],
    initializers: [t("axis", "int32", [], { values: [1] })],
    outputs: [out()],
  },
];

function matmul(name: string, a: readonly number[], b: readonly number[]): OrtCase {
  return { name, op: "MatMul", nodes: [node("MatMul", ["a", "b"])], inputs: [f("a", a), f("b", b)], outputs: [out()] };
}

const LINEAR: OrtCase[] = [
  matmul("MatMul_4x8_8x5", [4, 8], [8, 5]),
  matmul("MatMul_vec4_8x16_16x8", [8, 16], [16, 8]),
  matmul("MatMul_batched", [2, 3, 8], [8, 4]),
  matmul("MatMul_broadcast_batch", [2, 1, 3, 4], [3, 4, 2]),
  matmul("MatMul_vector_matrix", [5], [5, 3]),
  matmul("MatMul_32x32", [32, 32], [32, 32]),
  {
    name: "MatMul_weights_initializer",
    op: "MatMul",
    nodes: [node("MatMul", ["a", "w"])],
    inputs: [f("a", [6, 12])],
    initializers: [f("w", [12, 8])],
    outputs: [out()],
  },
  {
    name: "Gemm_transB_alpha_beta",
    op: "Gemm",
    nodes: [
      node("Gemm", ["a", "b", "c"], [{ name: "transB", i: 1 }, { name: "alpha", f: 0.5 }, { name: "beta", f: 2 }]),
    ],
    inputs: [f("a", [4, 6]), f("b", [5, 6]), f("c", [5])],
    outputs: [out()],
  },
  {
    name: "Gemm_transA_no_bias",
    op: "Gemm",
    nodes: [node("Gemm", ["a", "b"], [{ name: "transA", i: 1 }])],
    inputs: [f("a", [6, 4]), f("b", [6, 3])],
    outputs: [out()],
  },
  {
    name: "Gemm_vec4_matrix_bias",
    op: "Gemm",
    nodes: [node("Gemm", ["a", "b", "c"])],
    inputs: [f("a", [8, 8]), f("b", [8, 8]), f("c", [8, 8])],
    outputs: [out()],
  },
  {
    name: "Einsum_ij_jk",
    op: "Einsum",
    nodes: [node("Einsum", ["a", "b"], [{ name: "equation", s: "ij,jk->ik" }])],
    inputs: [f("a", [3, 4]), f("b", [4, 5])],
    outputs: [out()],
  },
  {
    name: "Einsum_batch_transpose",
    op: "Einsum",
    nodes: [node("Einsum", ["a", "b"], [{ name: "equation", s: "bij,bkj->bik" }])],
    inputs: [f("a", [2, 3, 4]), f("b", [2, 5, 4])],
    outputs: [out()],
  },
];

function conv(
  name: string,
  x: readonly number[],
  w: readonly number[],
  attrs: Attr[],
  opts: { bias?: boolean; op?: string; relu?: boolean } = {},
): OrtCase {
  const op = opts.op ?? "Conv";
  // Every attribute written, as exporters do (ORT's JavaScript EP needs dilations and strides).
  const spatial = x.length - 2;
  const given = new Set(attrs.map((a) => a.name));
  attrs = [
    ...attrs,
    ...(given.has("dilations") ? [] : [{ name: "dilations", ints: Array(spatial).fill(1) }]),
    ...(given.has("strides") ? [] : [{ name: "strides", ints: Array(spatial).fill(1) }]),
    ...(given.has("pads") ? [] : [{ name: "pads", ints: Array(2 * spatial).fill(0) }]),
    { name: "kernel_shape", ints: w.slice(2) },
  ];
  const inputs = opts.bias ? ["x", "w", "b"] : ["x", "w"];
  const nodes = opts.relu ? [node(op, inputs, attrs, ["c"]), node("Relu", ["c"])] : [node(op, inputs, attrs)];
  const outChannels = op === "ConvTranspose" ? w[1]! * (attrs.find((a) => a.name === "group")?.i ?? 1) : w[0]!;
  return {
    name,
    op,
    nodes,
    inputs: [f("x", x)],
    initializers: [f("w", w), ...(opts.bias ? [f("b", [outChannels])] : [])],
    outputs: [out()],
  };
}

const CONV: OrtCase[] = [
  conv("Conv_3x3_pad1_bias", [1, 2, 5, 5], [3, 2, 3, 3], [{ name: "pads", ints: [1, 1, 1, 1] }], { bias: true }),
  conv("Conv_3x3_stride2", [1, 3, 7, 7], [4, 3, 3, 3], [{ name: "strides", ints: [2, 2] }]),
  conv("Conv_depthwise_group4", [1, 4, 6, 6], [4, 1, 3, 3], [{ name: "group", i: 4 }, {
    name: "pads",
    ints: [1, 1, 1, 1],
  }]),
  conv("Conv_dilation2", [1, 2, 7, 7], [2, 2, 3, 3], [{ name: "dilations", ints: [2, 2] }]),
  conv("Conv_1x1_pointwise", [1, 8, 4, 4], [4, 8, 1, 1], [], { bias: true }),
  conv("Conv_1d", [1, 2, 9], [3, 2, 3], [{ name: "pads", ints: [1, 1] }]),
  conv("Conv_batch2_vec4_channels", [2, 4, 5, 5], [8, 4, 3, 3], [{ name: "pads", ints: [1, 1, 1, 1] }]),
  conv("Conv_relu_fused", [1, 2, 6, 6], [4, 2, 3, 3], [], { bias: true, relu: true }),
  conv("ConvTranspose_stride2", [1, 2, 3, 3], [2, 3, 3, 3], [{ name: "strides", ints: [2, 2] }], {
    op: "ConvTranspose",
    bias: true,
  }),
  conv("ConvTranspose_pad1", [1, 3, 4, 4], [3, 2, 3, 3], [{ name: "pads", ints: [1, 1, 1, 1] }], {
    op: "ConvTranspose",
  }),
];

function pool(name: string, op: string, attrs: Attr[], tolerance?: CaseTolerance, x = [1, 2, 6, 6]): OrtCase {
  return { name, op, nodes: [node(op, ["x"], attrs)], inputs: [f("x", x)], outputs: [out()], tolerance };
}

const POOL_NORM: OrtCase[] = [
  pool("MaxPool_2x2_stride2", "MaxPool", [{ name: "kernel_shape", ints: [2, 2] }, { name: "strides", ints: [2, 2] }]),
  pool("MaxPool_3x3_pad1", "MaxPool", [{ name: "kernel_shape", ints: [3, 3] }, { name: "pads", ints: [1, 1, 1, 1] }]),
  pool(
    "AveragePool_3x3_pad1_exclude_pad",
    "AveragePool",
    [{ name: "kernel_shape", ints: [3, 3] }, { name: "pads", ints: [1, 1, 1, 1] }],
    ROUNDING("divides a window's sum by its count"),
  ),
  pool("AveragePool_2x2_stride2", "AveragePool", [{ name: "kernel_shape", ints: [2, 2] }, {
    name: "strides",
    ints: [2, 2],
  }]),
  pool("GlobalAveragePool", "GlobalAveragePool", [], ROUNDING("divides a sum by its count"), [1, 3, 5, 5]),
  pool("GlobalMaxPool", "GlobalMaxPool", [], undefined, [1, 3, 5, 5]),
  {
    name: "Softmax_last_axis",
    op: "Softmax",
    nodes: [node("Softmax", ["x"])],
    inputs: [f("x", [2, 3, 8])],
    outputs: [out()],
    tolerance: TRANSCENDENTAL("exp and divides"),
  },
  {
    name: "Softmax_axis1",
    op: "Softmax",
    nodes: [node("Softmax", ["x"], [{ name: "axis", i: 1 }])],
    inputs: [f("x", [2, 5, 3])],
    outputs: [out()],
    tolerance: TRANSCENDENTAL("exp and divides"),
  },
  {
    name: "LayerNormalization_last_axis",
    op: "LayerNormalization",
    nodes: [node("LayerNormalization", ["x", "s", "b"], [{ name: "epsilon", f: 1e-5 }])],
    inputs: [f("x", [2, 3, 8])],
    initializers: [f("s", [8]), f("b", [8])],
    outputs: [out()],
    tolerance: ROUNDING("divides and takes an inverse square root"),
  },
  {
    name: "LayerNormalization_two_axes",
    op: "LayerNormalization",
    nodes: [node("LayerNormalization", ["x", "s", "b"], [{ name: "axis", i: 1 }, { name: "epsilon", f: 1e-5 }])],
    inputs: [f("x", [2, 3, 4])],
    initializers: [f("s", [3, 4]), f("b", [3, 4])],
    outputs: [out()],
    tolerance: ROUNDING("divides and takes an inverse square root"),
  },
  {
    name: "InstanceNormalization",
    op: "InstanceNormalization",
    nodes: [node("InstanceNormalization", ["x", "s", "b"], [{ name: "epsilon", f: 1e-5 }])],
    inputs: [f("x", [2, 3, 4, 4])],
    initializers: [f("s", [3]), f("b", [3])],
    outputs: [out()],
    tolerance: ROUNDING("divides and takes an inverse square root"),
  },
  {
    name: "BatchNormalization_inference",
    op: "BatchNormalization",
    nodes: [node("BatchNormalization", ["x", "s", "b", "m", "v"], [{ name: "epsilon", f: 1e-5 }])],
    inputs: [f("x", [2, 3, 4, 4])],
    initializers: [f("s", [3]), f("b", [3]), f("m", [3]), f("v", [3], "positive")],
    outputs: [out()],
    tolerance: ROUNDING("divides by a square root"),
  },
  {
    name: "SkipLayerNormalization",
    op: "SkipLayerNormalization",
    nodes: [
      node("SkipLayerNormalization", ["x", "skip", "g", "b"], [{ name: "epsilon", f: 1e-5 }], ["y"], "com.microsoft"),
    ],
    inputs: [f("x", [2, 3, 8]), f("skip", [2, 3, 8])],
    initializers: [f("g", [8]), f("b", [8])],
    outputs: [out()],
    tolerance: ROUNDING("divides and takes an inverse square root"),
  },
  {
    name: "SimplifiedLayerNormalization",
    op: "SimplifiedLayerNormalization",
    nodes: [node("SimplifiedLayerNormalization", ["x", "s"], [{ name: "epsilon", f: 1e-5 }])],
    inputs: [f("x", [2, 3, 8])],
    initializers: [f("s", [8])],
    outputs: [out()],
    tolerance: ROUNDING("divides and takes an inverse square root"),
  },
];

const DATA_MOVEMENT: OrtCase[] = [
  {
    name: "Transpose_2d",
    op: "Transpose",
    nodes: [node("Transpose", ["x"], [{ name: "perm", ints: [1, 0] }])],
    inputs: [f("x", [6, 5])],
    outputs: [out()],
  },
  {
    name: "Transpose_3d_rotate",
    op: "Transpose",
    nodes: [node("Transpose", ["x"], [{ name: "perm", ints: [2, 0, 1] }])],
    inputs: [f("x", [2, 3, 4])],
    outputs: [out()],
  },
  {
    name: "Transpose_4d_heads",
    op: "Transpose",
    nodes: [node("Transpose", ["x"], [{ name: "perm", ints: [0, 2, 1, 3] }])],
    inputs: [f("x", [2, 3, 4, 2])],
    outputs: [out()],
  },
  {
    name: "Transpose_5d_reverse",
    op: "Transpose",
    nodes: [node("Transpose", ["x"], [{ name: "perm", ints: [4, 3, 2, 1, 0] }])],
    inputs: [f("x", [2, 1, 3, 2, 2])],
    outputs: [out()],
  },
  {
    name: "Transpose_6d",
    op: "Transpose",
    nodes: [node("Transpose", ["x"], [{ name: "perm", ints: [0, 3, 1, 4, 2, 5] }])],
    inputs: [f("x", [1, 2, 2, 3, 2, 2])],
    outputs: [out()],
  },
  {
    name: "Gather_axis0_int64",
    op: "Gather",
    nodes: [node("Gather", ["x", "i"])],
    inputs: [f("x", [5, 3]), t("i", "int64", [2, 2], { index: 5 })],
    outputs: [out()],
  },
  {
    name: "Gather_axis1_int32",
    op: "Gather",
    nodes: [node("Gather", ["x", "i"], [{ name: "axis", i: 1 }])],
    inputs: [f("x", [2, 6, 2]), t("i", "int32", [3], { values: [5, 0, -2] })],
    outputs: [out()],
  },
  {
    name: "GatherElements_axis1",
    op: "GatherElements",
    nodes: [node("GatherElements", ["x", "i"], [{ name: "axis", i: 1 }])],
    inputs: [f("x", [3, 4]), t("i", "int64", [3, 2], { index: 4 })],
    outputs: [out()],
  },
  {
    name: "GatherND",
    op: "GatherND",
    nodes: [node("GatherND", ["x", "i"])],
    inputs: [f("x", [3, 4, 2]), t("i", "int64", [2, 2], { values: [0, 1, 2, 3] })],
    outputs: [out()],
  },
  {
    name: "ScatterND",
    op: "ScatterND",
    nodes: [node("ScatterND", ["x", "i", "u"])],
    inputs: [f("x", [4, 3]), t("i", "int64", [2, 1], { values: [2, 0] }), f("u", [2, 3])],
    outputs: [out()],
    opset: 16,
  },
  {
    name: "Concat_three_axis1",
    op: "Concat",
    nodes: [node("Concat", ["a", "b", "c"], [{ name: "axis", i: 1 }])],
    inputs: [f("a", [2, 1, 3]), f("b", [2, 2, 3]), f("c", [2, 3, 3])],
    outputs: [out()],
  },
  {
    name: "Concat_int32_axis0",
    op: "Concat",
    nodes: [node("Concat", ["a", "b"], [{ name: "axis", i: 0 }])],
    inputs: [t("a", "int32", [2, 3], "int"), t("b", "int32", [1, 3], "int")],
    outputs: [out("y", "int32")],
  },
  {
    name: "Split_three_axis1",
    op: "Split",
    nodes: [node("Split", ["x"], [{ name: "axis", i: 1 }], ["p", "q", "r"])],
    inputs: [f("x", [2, 6, 2])],
    outputs: [out("p"), out("q"), out("r")],
    opset: 13,
  },
  {
    name: "Slice_steps",
    op: "Slice",
    nodes: [node("Slice", ["x", "s", "e", "a", "st"])],
    inputs: [f("x", [4, 6])],
    initializers: [i64("s", [0, 5]), i64("e", [4, 0]), i64("a", [0, 1]), i64("st", [2, -2])],
    outputs: [out()],
  },
  {
    name: "Pad_constant",
    op: "Pad",
    nodes: [node("Pad", ["x", "p", "v"])],
    inputs: [f("x", [2, 3])],
    initializers: [i64("p", [1, 0, 0, 2]), t("v", "float", [], { values: [0.5] })],
    outputs: [out()],
  },
  {
    name: "Pad_reflect",
    op: "Pad",
    nodes: [node("Pad", ["x", "p"], [{ name: "mode", s: "reflect" }])],
    inputs: [f("x", [3, 4])],
    initializers: [i64("p", [1, 2, 1, 2])],
    outputs: [out()],
  },
  {
    name: "Pad_edge",
    op: "Pad",
    nodes: [node("Pad", ["x", "p"], [{ name: "mode", s: "edge" }])],
    inputs: [f("x", [1, 2, 3, 3])],
    initializers: [i64("p", [0, 0, 1, 1, 0, 0, 1, 1])],
    outputs: [out()],
  },
  {
    name: "Expand",
    op: "Expand",
    nodes: [node("Expand", ["x", "s"])],
    inputs: [f("x", [3, 1])],
    initializers: [i64("s", [2, 3, 4])],
    outputs: [out()],
  },
  {
    name: "Tile",
    op: "Tile",
    nodes: [node("Tile", ["x", "r"])],
    inputs: [f("x", [2, 3])],
    initializers: [i64("r", [2, 2])],
    outputs: [out()],
  },
  {
    name: "DepthToSpace_DCR",
    op: "DepthToSpace",
    nodes: [node("DepthToSpace", ["x"], [{ name: "blocksize", i: 2 }])],
    inputs: [f("x", [1, 8, 2, 3])],
    outputs: [out()],
  },
  {
    name: "Trilu_upper",
    op: "Trilu",
    nodes: [node("Trilu", ["x"])],
    inputs: [f("x", [2, 4, 5])],
    outputs: [out()],
  },
  {
    name: "Range_int32",
    op: "Range",
    nodes: [node("Range", ["s", "l", "d"])],
    inputs: [
      t("s", "int32", [], { values: [-3] }),
      t("l", "int32", [], { values: [12] }),
      t("d", "int32", [], { values: [2] }),
    ],
    outputs: [out("y", "int32")],
  },
  {
    name: "Resize_nearest_x2",
    op: "Resize",
    nodes: [node("Resize", ["x", "", "sc"], [{ name: "mode", s: "nearest" }])],
    inputs: [f("x", [1, 1, 2, 3])],
    initializers: [t("sc", "float", [4], { values: [1, 1, 2, 2] })],
    outputs: [out()],
  },
  {
    name: "Resize_linear_half_pixel",
    op: "Resize",
    nodes: [node("Resize", ["x", "", "sc"], [{ name: "mode", s: "linear" }])],
    inputs: [f("x", [1, 2, 3, 3])],
    initializers: [t("sc", "float", [4], { values: [1, 1, 2, 2] })],
    outputs: [out()],
    tolerance: ROUNDING("maps output to input coordinates by division and interpolates with a * b + c"),
  },
  {
    name: "Resize_cubic_align_corners",
    op: "Resize",
    nodes: [
      node("Resize", ["x", "", "sc"], [{ name: "mode", s: "cubic" }, {
        name: "coordinate_transformation_mode",
        s: "align_corners",
      }]),
    ],
    inputs: [f("x", [1, 1, 4, 4])],
    initializers: [t("sc", "float", [4], { values: [1, 1, 1.5, 1.5] })],
    outputs: [out()],
    tolerance: SUMMED(
      "maps coordinates by division and sums 16 products of cubic weights, each weight a polynomial in the fractional coordinate",
      "23 ULP, 1.4e-6, on an NVIDIA H100",
    ),
  },
];

const ATTENTION: OrtCase[] = [
  {
    name: "Attention_packed_qkv",
    op: "Attention",
    nodes: [node("Attention", ["x", "w", "b"], [{ name: "num_heads", i: 2 }], ["y"], "com.microsoft")],
    inputs: [f("x", [1, 4, 8])],
    initializers: [f("w", [8, 24]), f("b", [24])],
    outputs: [out()],
    tolerance: TRANSCENDENTAL("exp (softmax), divides and scales by 1/sqrt(head size)"),
  },
  {
    name: "MultiHeadAttention",
    op: "MultiHeadAttention",
    nodes: [node("MultiHeadAttention", ["q", "k", "v"], [{ name: "num_heads", i: 2 }], ["y"], "com.microsoft")],
    inputs: [f("q", [1, 3, 8]), f("k", [1, 5, 8]), f("v", [1, 5, 8])],
    outputs: [out()],
    tolerance: TRANSCENDENTAL("exp (softmax), divides and scales by 1/sqrt(head size)"),
  },
  {
    name: "MatMulNBits_4bit_block32",
    op: "MatMulNBits",
    nodes: [
      node(
        "MatMulNBits",
        ["a", "b", "s"],
        [
          { name: "K", i: 32 },
          { name: "N", i: 8 },
          { name: "bits", i: 4 },
          { name: "block_size", i: 32 },
        ],
        ["y"],
        "com.microsoft",
      ),
    ],
    inputs: [f("a", [3, 32])],
    initializers: [t("b", "uint8", [8, 1, 16], { index: 256 }), f("s", [8], "positive")],
    outputs: [out()],
  },
  {
    name: "GroupQueryAttention",
    op: "GroupQueryAttention",
    nodes: [
      node(
        "GroupQueryAttention",
        ["q", "k", "v", "pk", "pv", "sl", "tl"],
        [
          { name: "num_heads", i: 2 },
          { name: "kv_num_heads", i: 1 },
        ],
        ["y", "ok", "ov"],
        "com.microsoft",
      ),
    ],
    inputs: [
      f("q", [1, 3, 16]),
      f("k", [1, 3, 8]),
      f("v", [1, 3, 8]),
      f("pk", [1, 1, 0, 8]),
      f("pv", [1, 1, 0, 8]),
      t("sl", "int32", [1], { values: [2] }),
      t("tl", "int32", [], { values: [3] }),
    ],
    outputs: [out(), out("ok"), out("ov")],
    tolerance: TRANSCENDENTAL("exp (softmax), divides and scales by 1/sqrt(head size)"),
  },
  {
    name: "FastGelu_bias",
    op: "FastGelu",
    nodes: [node("FastGelu", ["x", "b"], [], ["y"], "com.microsoft")],
    inputs: [f("x", [2, 8])],
    initializers: [f("b", [8])],
    outputs: [out()],
    tolerance: TRANSCENDENTAL("tanh"),
  },
];

/** Every case, in the order they run. */
export const ORT_CASES: readonly OrtCase[] = [
  ...ELEMENTWISE,
  ...REDUCTIONS,
  ...LINEAR,
  ...CONV,
  ...POOL_NORM,
  ...DATA_MOVEMENT,
  ...ATTENTION,
];

/** The values of a tensor: deterministic from the case and tensor names. */
export function tensorValues(caseName: string, tensor: CaseTensor): number[] {
  const n = tensor.shape.reduce((a, b) => a * b, 1);
  const g = tensor.gen;
  if (typeof g === "object" && "values" in g) {
    return Array.from({ length: n }, (_, i) => g.values[i % g.values.length]!);
  }
  let s = 2166136261;
  for (const c of `${caseName}/${tensor.name}`) s = Math.imul(s ^ c.charCodeAt(0), 16777619) >>> 0;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  return Array.from({ length: n }, () => {
    const r = next();
    if (g === "signed") return Math.floor(r * 33) / 8 - 2;
    if (g === "positive") return (Math.floor(r * 32) + 1) / 8;
    if (g === "int") return Math.floor(r * 11) - 5;
    if (g === "bool") return r < 0.5 ? 0 : 1;
    return Math.floor(r * g.index);
  });
}
