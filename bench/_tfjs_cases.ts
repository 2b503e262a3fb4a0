/**
 * The TensorFlow.js ops `capture_conformance.ts` runs on tfjs's WebGPU
 * backend: one small op per case, inputs drawn as in `_ort_cases.ts`
 * (multiples of 1/8, so sums and products are exact in f32). Rank-5 and
 * rank-6 cases matter most: tfjs declares their shapes in its uniform struct
 * as `@align(16) xShape: vec5` (a struct of five i32), the layout a runtime
 * that binds uniforms as storage must keep.
 *
 * @module
 */

import { type CaseTolerance, type Gen, ROUNDING, TRANSCENDENTAL } from "./_ort_cases.ts";

// deno-lint-ignore no-explicit-any
type Tf = any;
// deno-lint-ignore no-explicit-any
type Tensor = any;
/** Makes an input tensor: float32, or int32 for `"int"` and `{ index }`, or bool. */
export type Input = (name: string, shape: number[], gen?: Gen) => Tensor;

/** One op. */
export interface TfjsCase {
  readonly name: string;
  readonly op: string;
  readonly tolerance?: CaseTolerance;
  run(tf: Tf, input: Input): Tensor | Tensor[];
}

const c = (name: string, op: string, run: TfjsCase["run"], tolerance?: CaseTolerance): TfjsCase => ({
  name,
  op,
  run,
  tolerance,
});

/** Every case, in the order they run. */
export const TFJS_CASES: readonly TfjsCase[] = [
  // Elementwise, with broadcasting, up to rank 6.
  c("add_broadcast", "Add", (tf, x) => tf.add(x("a", [2, 3, 4]), x("b", [4]))),
  c("sub_5d_broadcast", "Sub", (tf, x) => tf.sub(x("a", [2, 1, 3, 2, 2]), x("b", [3, 1, 2]))),
  c("mul_6d_broadcast", "Mul", (tf, x) => tf.mul(x("a", [1, 2, 2, 3, 2, 2]), x("b", [2, 2]))),
  c("div_broadcast", "Div", (tf, x) => tf.div(x("a", [3, 4]), x("b", [3, 1], "positive")), ROUNDING("divides")),
  c("maximum", "Maximum", (tf, x) => tf.maximum(x("a", [2, 5]), x("b", [5]))),
  c("minimum_5d", "Minimum", (tf, x) => tf.minimum(x("a", [1, 2, 2, 2, 3]), x("b", [1, 2, 1, 2, 3]))),
  c("relu", "Relu", (tf, x) => tf.relu(x("x", [3, 7]))),
  c("leaky_relu", "LeakyRelu", (tf, x) => tf.leakyRelu(x("x", [3, 7]), 0.125)),
  c("prelu", "Prelu", (tf, x) => tf.prelu(x("x", [2, 3, 4]), x("alpha", [4]))),
  c("clip", "ClipByValue", (tf, x) => tf.clipByValue(x("x", [4, 5]), -0.5, 1.25)),
  c("abs_neg", "Abs", (tf, x) => tf.neg(tf.abs(x("x", [2, 9])))),
  c("sigmoid", "Sigmoid", (tf, x) => tf.sigmoid(x("x", [3, 5])), TRANSCENDENTAL("exp")),
  c("exp", "Exp", (tf, x) => tf.exp(x("x", [3, 5])), TRANSCENDENTAL("exp")),
  c("tanh", "Tanh", (tf, x) => tf.tanh(x("x", [3, 5])), TRANSCENDENTAL("tanh")),
  c("sqrt", "Sqrt", (tf, x) => tf.sqrt(x("x", [3, 5], "positive")), ROUNDING("takes square roots")),
  c("elu", "Elu", (tf, x) => tf.elu(x("x", [3, 5])), TRANSCENDENTAL("exp")),
  c(
    "pow",
    "Pow",
    (tf, x) => tf.pow(x("a", [2, 4], "positive"), x("b", [4], { values: [0, 1, 2, 0.5] })),
    TRANSCENDENTAL("pow"),
  ),
  c("greater", "Greater", (tf, x) => tf.greater(x("a", [3, 4]), x("b", [4]))),
  c("equal_int", "Equal", (tf, x) => tf.equal(x("a", [2, 6], "int"), x("b", [6], "int"))),
  c("logical_and", "LogicalAnd", (tf, x) => tf.logicalAnd(x("a", [2, 8], "bool"), x("b", [8], "bool"))),
  c("where", "Select", (tf, x) => tf.where(x("c", [2, 1, 4], "bool"), x("a", [2, 3, 4]), x("b", [2, 3, 4]))),
  c("cast_float_int", "Cast", (tf, x) => tf.cast(x("x", [3, 5]), "int32")),
  c("cast_int_float", "Cast", (tf, x) => tf.cast(x("x", [3, 5], "int"), "float32")),
  c("addn", "AddN", (tf, x) => tf.addN([x("a", [2, 6]), x("b", [2, 6]), x("c", [2, 6])])),
  // Linear algebra.
  c("matmul", "BatchMatMul", (tf, x) => tf.matMul(x("a", [4, 8]), x("b", [8, 5]))),
  c(
    "matmul_batched_transpose_b",
    "BatchMatMul",
    (tf, x) => tf.matMul(x("a", [2, 3, 8]), x("b", [2, 4, 8]), false, true),
  ),
  c("matmul_32", "BatchMatMul", (tf, x) => tf.matMul(x("a", [32, 32]), x("b", [32, 32]))),
  c(
    "fused_matmul_bias_relu",
    "_FusedMatMul",
    (tf, x) => tf.fused.matMul({ a: x("a", [4, 8]), b: x("b", [8, 6]), bias: x("bias", [6]), activation: "relu" }),
  ),
  // Convolutions and pooling, NHWC (and NDHWC).
  c("conv2d_same", "Conv2D", (tf, x) => tf.conv2d(x("x", [1, 5, 5, 2]), x("w", [3, 3, 2, 3]), 1, "same")),
  c("conv2d_stride2_valid", "Conv2D", (tf, x) => tf.conv2d(x("x", [1, 7, 7, 3]), x("w", [3, 3, 3, 4]), 2, "valid")),
  c("conv2d_vec4_channels", "Conv2D", (tf, x) => tf.conv2d(x("x", [2, 6, 6, 4]), x("w", [3, 3, 4, 8]), 1, "same")),
  c("fused_conv2d_bias_relu", "FusedConv2D", (tf, x) =>
    tf.fused.conv2d({
      x: x("x", [1, 6, 6, 2]),
      filter: x("w", [3, 3, 2, 4]),
      strides: 1,
      pad: "valid",
      bias: x("bias", [4]),
      activation: "relu",
    })),
  c(
    "depthwise_conv2d",
    "DepthwiseConv2dNative",
    (tf, x) => tf.depthwiseConv2d(x("x", [1, 6, 6, 4]), x("w", [3, 3, 4, 1]), 1, "same"),
  ),
  c(
    "conv2d_transpose",
    "Conv2DBackpropInput",
    (tf, x) => tf.conv2dTranspose(x("x", [1, 3, 3, 2]), x("w", [3, 3, 3, 2]), [1, 7, 7, 3], 2, "valid"),
  ),
  c("conv3d", "Conv3D", (tf, x) => tf.conv3d(x("x", [1, 4, 4, 4, 2]), x("w", [2, 2, 2, 2, 3]), 1, "same")),
  c("max_pool", "MaxPool", (tf, x) => tf.maxPool(x("x", [1, 6, 6, 2]), 2, 2, "valid")),
  c("avg_pool_same", "AvgPool", (tf, x) => tf.avgPool(x("x", [1, 6, 6, 2]), 3, 1, "same"), ROUNDING("divides")),
  c("max_pool3d", "MaxPool3D", (tf, x) => tf.maxPool3d(x("x", [1, 4, 4, 4, 2]), 2, 2, "valid")),
  c("avg_pool3d", "AvgPool3D", (tf, x) => tf.avgPool3d(x("x", [1, 4, 4, 4, 2]), 2, 1, "same"), ROUNDING("divides")),
  // Reductions and normalization.
  c("sum_axis1", "Sum", (tf, x) => tf.sum(x("x", [2, 3, 4]), 1)),
  c("sum_all", "Sum", (tf, x) => tf.sum(x("x", [6, 8]))),
  c("mean_last", "Mean", (tf, x) => tf.mean(x("x", [3, 8]), -1), ROUNDING("divides a sum by its count")),
  c("max_axes", "Max", (tf, x) => tf.max(x("x", [2, 3, 4]), [0, 2])),
  c("min_keep_dims", "Min", (tf, x) => tf.min(x("x", [3, 5]), 1, true)),
  c("prod", "Prod", (tf, x) => tf.prod(x("x", [3, 4], { values: [1, -0.5, 2, 0.25, -1, 1.5] }), 1)),
  c("argmax", "ArgMax", (tf, x) => tf.argMax(x("x", [2, 5, 3]), 1)),
  c("argmin", "ArgMin", (tf, x) => tf.argMin(x("x", [3, 6]), -1)),
  c("cumsum", "Cumsum", (tf, x) => tf.cumsum(x("x", [3, 5]), 1)),
  c("softmax", "Softmax", (tf, x) => tf.softmax(x("x", [2, 3, 8])), TRANSCENDENTAL("exp and divides")),
  c("log_sum_exp", "LogSumExp", (tf, x) => tf.logSumExp(x("x", [3, 6]), 1), TRANSCENDENTAL("exp and log")),
  c("batch_norm", "FusedBatchNorm", (tf, x) =>
    tf.batchNorm(
      x("x", [2, 3, 3, 4]),
      x("m", [4]),
      x("v", [4], "positive"),
      x("o", [4]),
      x("s", [4]),
      1e-3,
    ), ROUNDING("divides by a square root")),
  // Data movement.
  c("transpose_2d", "Transpose", (tf, x) => tf.transpose(x("x", [6, 5]))),
  c("transpose_4d", "Transpose", (tf, x) => tf.transpose(x("x", [2, 3, 4, 2]), [0, 2, 1, 3])),
  c("transpose_5d", "Transpose", (tf, x) => tf.transpose(x("x", [2, 1, 3, 2, 2]), [4, 3, 2, 1, 0])),
  c("transpose_6d", "Transpose", (tf, x) => tf.transpose(x("x", [1, 2, 2, 3, 2, 2]), [0, 3, 1, 4, 2, 5])),
  c("gather_axis0", "GatherV2", (tf, x) => tf.gather(x("x", [5, 3]), x("i", [4], { index: 5 }), 0)),
  c("gather_axis1", "GatherV2", (tf, x) => tf.gather(x("x", [2, 6, 2]), x("i", [3], { index: 6 }), 1)),
  c("gather_nd", "GatherNd", (tf, x) => tf.gatherND(x("x", [3, 4, 2]), x("i", [2, 2], { index: 3 }))),
  c(
    "scatter_nd",
    "ScatterNd",
    (tf, x) => tf.scatterND(tf.cast(x("i", [2, 1], { values: [2, 0] }), "int32"), x("u", [2, 3]), [4, 3]),
  ),
  c("concat_axis1", "Concat", (tf, x) => tf.concat([x("a", [2, 1, 3]), x("b", [2, 2, 3]), x("c", [2, 3, 3])], 1)),
  c("concat_5d", "Concat", (tf, x) => tf.concat([x("a", [1, 2, 2, 2, 2]), x("b", [1, 2, 2, 1, 2])], 3)),
  c("slice_5d", "Slice", (tf, x) => tf.slice(x("x", [2, 3, 3, 2, 2]), [1, 0, 1, 0, 1], [1, 2, 2, 2, 1])),
  c("strided_slice", "StridedSlice", (tf, x) => tf.stridedSlice(x("x", [4, 6]), [0, 5], [4, 0], [2, -2])),
  c("pad", "PadV2", (tf, x) => tf.pad(x("x", [2, 3]), [[1, 0], [0, 2]], 0.5)),
  c("mirror_pad", "MirrorPad", (tf, x) => tf.mirrorPad(x("x", [3, 4]), [[1, 1], [2, 2]], "reflect")),
  c("tile", "Tile", (tf, x) => tf.tile(x("x", [2, 3]), [2, 2])),
  c("reverse", "Reverse", (tf, x) => tf.reverse(x("x", [2, 3, 4]), [1, 2])),
  c("one_hot", "OneHot", (tf, x) => tf.oneHot(x("i", [5], { index: 4 }), 4)),
  c("depth_to_space", "DepthToSpace", (tf, x) => tf.depthToSpace(x("x", [1, 2, 3, 8]), 2, "NHWC")),
  c("resize_nearest", "ResizeNearestNeighbor", (tf, x) => tf.image.resizeNearestNeighbor(x("x", [1, 2, 3, 2]), [4, 6])),
  c(
    "resize_bilinear",
    "ResizeBilinear",
    (tf, x) => tf.image.resizeBilinear(x("x", [1, 3, 3, 2]), [6, 6]),
    ROUNDING("maps output to input coordinates by division and interpolates with a * b + c"),
  ),
  c("topk", "TopK", (tf, x) => {
    const { values, indices } = tf.topk(x("x", [2, 9]), 3);
    return [values, indices];
  }),
];
