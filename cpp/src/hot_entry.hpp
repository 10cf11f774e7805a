// Internal: POSENC_HOT_ENTRY marks a -O3 function whose loops run per element and whose callers
// (the embind methods, compiled for size in the wasm) must call it rather than inline it: through
// link-time optimization an inlined SIMD loop would take the caller's -Oz and ran 10-30x slower
// (measured on the rotary rows). LLVM then optimizes the function's body at -O3 on its own;
// binaryen may still paste a single-caller body into its caller at the wasm level, which keeps that
// -O3 code (bench/run.mjs rotary rows: unchanged).
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define POSENC_HOT_ENTRY __attribute__((noinline))
#else
#define POSENC_HOT_ENTRY
#endif

// POSENC_SMALL marks a function of a -O3 file that runs once per call, not per element (the
// multimodal rows' set-up and merging; argument checks; the layer's configure and set_tensor; the
// ALiBi slopes, computed once per head count): clang then compiles it for size (no unrolling or
// vectorizing of its loops), as the -Oz files are.
#if defined(__clang__)
#define POSENC_SMALL __attribute__((minsize))
#else
#define POSENC_SMALL
#endif

// POSENC_NO_UNROLL, before a loop of a -O3 function: clang makes no unrolled copies of it. For the
// loops whose copies cost module size and buy no measurable time: a tail of a few floats after a
// vector loop, set-up (the anchor cache's slots), and loops beside much more expensive work (the
// GEMM's edge tiles and GELU's erf per value, padding rows, copies of a chunk's positions).
// POSENC_NO_UNROLL_OR_VECTORIZE also keeps the loop scalar (the rows beyond the fast angle
// reduction, where each value costs far more than its store). Neither changes a result: no float
// operation is reordered or contracted.
#if defined(__clang__)
#define POSENC_NO_UNROLL _Pragma("clang loop unroll(disable)")
#define POSENC_NO_UNROLL_OR_VECTORIZE _Pragma("clang loop vectorize(disable) unroll(disable)")
#else
#define POSENC_NO_UNROLL
#define POSENC_NO_UNROLL_OR_VECTORIZE
#endif
