// Type declarations of the posenc package (written by hand; checked with tsc --strict in tests).

import type { LayerApi, SequenceValues } from './layer.js';
import type { Float16Result, RotaryApi } from './rotary.js';

export * from './layer.js';
export * from './rope_index.js';
export * from './rotary.js';

/** A preset name: each reproduces one framework's table exactly (to float32 rounding). */
export type PresetName =
  | 'vaswani'
  | 'tf-tutorial'
  | 'hf-marian'
  | 'tensor2tensor'
  | 'fairseq'
  | 'whisper'
  | 'opennmt-tf';

/** Column order: `interleaved` puts sin(p w_i) at column 2i and cos at 2i+1; `split` is [sin block | cos block]. */
export type Layout = 'interleaved' | 'split';

/**
 * Frequency spacing, w_i = minTimescale * (base / minTimescale)^(-e_i):
 * `paper` e_i = 2i / dim; `half` e_i = i / max(n - 1, 1) with n sine columns (tensor2tensor, fairseq, Whisper).
 */
export type Frequencies = 'paper' | 'half';

/**
 * Odd dims: `paper` gives ceil(d/2) sine and floor(d/2) cosine columns; `zero-pad` makes the last column
 * zero; `reject` throws a RangeError.
 */
export type OddDim = 'paper' | 'zero-pad' | 'reject';

/** Options that choose the table. Each overrides what the preset sets. */
export interface SpecOptions {
  /** Which framework's table to reproduce. Default 'vaswani'. */
  preset?: PresetName;
  /** The longest timescale (max_timescale / max_wavelength), > 1 and > minTimescale. Default 10000. */
  base?: number;
  /** Multiplies every frequency, as tensor2tensor's min_timescale does; > 0. Default 1. */
  minTimescale?: number;
  /** Column order. Default: the preset's. */
  layout?: Layout;
  /** Frequency spacing. Default: the preset's. */
  frequencies?: Frequencies;
  /** Odd-dim policy. Default: the preset's. */
  odd?: OddDim;
}

/**
 * Which rows (positions) to produce. Give at most one of `positions` or `offset`/`paddingMask`.
 * Positions are absolute: the number the angle multiplies. Every value is the float32 nearest to sin or
 * cos of the exact angle while the row's largest angle is at most 2^31 radians (every position below
 * 2^24 with every preset); positions up to 2^31 - 1 are accepted.
 */
export interface RowOptions {
  /**
   * Rows are consecutive positions starting `offset` after the preset's first position (0; 1 for
   * opennmt-tf; paddingIdx + 1 for fairseq). Finite, >= 0; fractional values are allowed. Default 0.
   */
  offset?: number;
  /** Explicit absolute position of each row (one per row; finite numbers from 0 to 2^31 - 1). */
  positions?: SequenceValues;
  /**
   * One entry per row, 1 (or true) for padding: padding rows are all zero and the other rows are
   * numbered consecutively from the first position + offset, skipping padding (fairseq's make_positions).
   */
  paddingMask?: ArrayLike<number | boolean> | SequenceValues;
  /** fairseq only: the padding index; positions start at paddingIdx + 1 and row paddingIdx is zero. Default 1. */
  paddingIdx?: number;
}

export interface EncodeOptions extends SpecOptions, RowOptions {
  /**
   * Fill this array instead of allocating one; it must hold at least length * dim floats. The result
   * is `out` itself when it has exactly that length, else its first length * dim elements.
   */
  out?: Float32Array;
}

/**
 * `dtype: 'float16' | 'bfloat16'`: each value the float16 (bfloat16) nearest to the exact value,
 * rounded once (not through float32: docs/PRECISION.md). float16 comes as a Float16Result, bfloat16
 * as bits in a Uint16Array. `dtype: 'float32'` is the default.
 */
export interface HalfOptions {
  dtype: 'float16' | 'bfloat16';
  /** Fill this array instead (a Uint16Array, or a Float16Array for float16), at least as long as the result. */
  out?: Uint16Array | Float16Result;
}

export interface AddToOptions extends SpecOptions, RowOptions {
  /** Embeddings are multiplied by scale before the encoding is added (Math.sqrt(dim) as in the paper). Default 1. */
  scale?: number;
}

export interface ShiftOptions extends SpecOptions {
  /**
   * `matrix` (default): a dim x dim row-major Float32Array M with PE(p + k)[r] = sum_c M[r*dim + c] PE(p)[c].
   * `blocks`: per frequency i, [cos(k w_i), sin(k w_i)] (2 * number of sine columns floats).
   */
  form?: 'matrix' | 'blocks';
}

/** A preset's facts, as `pe.presets` lists them. */
export interface PresetInfo {
  readonly name: PresetName;
  /** The framework file whose formula it reproduces. */
  readonly source: string;
  readonly layout: Layout;
  readonly frequencies: Frequencies;
  readonly odd: OddDim;
  /** Smallest dim accepted. */
  readonly minDim: number;
  /**
   * true (`vaswani`, and every call without a preset): the frequencies are the real numbers
   * m (b / m)^(-e), and each value is the float32 nearest to sin / cos of the real angle. false
   * (the framework presets): the float64 frequencies `m * exp(-e * ln(b / m))`, each step rounded,
   * and each value the float32 nearest to sin / cos of the position times that float64.
   */
  readonly exactFrequencies: boolean;
  /** Absolute position of row 0 with offset 0. */
  readonly firstPosition: number | 'paddingIdx + 1';
}

/**
 * A reusable encoder that keeps its spec's frequencies in wasm memory. Call dispose() (or use
 * `using`) when done; a FinalizationRegistry frees it otherwise, eventually. Every method throws
 * an Error after dispose(); dispose() twice is harmless.
 */
export interface Encoder {
  readonly dim: number;
  readonly preset: PresetName;
  readonly layout: Layout;
  readonly frequencies: Frequencies;
  readonly odd: OddDim;
  readonly base: number;
  readonly minTimescale: number;
  /** True after dispose(). */
  readonly disposed: boolean;
  /** `length` rows of the table: Float32Array(length * dim), row-major. */
  encode(length: number, options?: RowOptions & { out?: Float32Array; dtype?: 'float32' }): Float32Array;
  /** The same rows as 16-bit values (HalfOptions). */
  encode(length: number, options: RowOptions & HalfOptions & { dtype: 'bfloat16' }): Uint16Array;
  encode(length: number, options: RowOptions & HalfOptions): Float16Result;
  /** In place: embeddings = embeddings * scale + PE; embeddings.length must be a multiple of dim. Returns embeddings. */
  addTo(embeddings: Float32Array, options?: RowOptions & { scale?: number }): Float32Array;
  /** A new Float32Array with rows [embedding (embeddingDim) | PE (dim)]. */
  concat(embeddings: Float32Array, embeddingDim: number, options?: RowOptions & { out?: Float32Array }): Float32Array;
  /** The rotation mapping PE(p) to PE(p + k); see ShiftOptions.form. */
  shift(k: number, options?: { form?: 'matrix' | 'blocks' }): Float32Array;
  /** Frees the wasm memory. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/**
 * The paper's encodings of a loaded instance, in both entries. Instances are independent (each has
 * its own wasm memory).
 */
export interface PosencSinusoidal {
  /** True when the wasm SIMD build runs, false for the baseline build. */
  readonly simd: boolean;
  /** Threads this instance runs (the caller's included): 1, or init()'s `threads` for the threaded build (1 after `dispose()`). */
  readonly threads: number;
  /**
   * Stops the threaded build's worker threads (a no-op with one thread); the instance then computes
   * on the caller's thread. A Node process exits without it.
   */
  dispose(): void;
  /** The named presets and what each reproduces. */
  readonly presets: readonly PresetInfo[];
  /**
   * `length` rows of the `dim`-column table as a Float32Array(length * dim), row-major: row r is the
   * position offset + r (from the preset's first position) unless `positions` or `paddingMask` say otherwise.
   * @throws TypeError for wrong types or unknown options; RangeError for bad values or sizes.
   */
  encode(length: number, dim: number, options?: EncodeOptions & { dtype?: 'float32' }): Float32Array;
  /** The same table as 16-bit values, each rounded once from the exact value (HalfOptions). */
  encode(length: number, dim: number, options: Omit<EncodeOptions, 'out'> & HalfOptions & { dtype: 'bfloat16' }): Uint16Array;
  encode(length: number, dim: number, options: Omit<EncodeOptions, 'out'> & HalfOptions): Float16Result;
  /**
   * In place and fused: embeddings = embeddings * scale + PE, for embeddings.length / dim rows.
   * Returns `embeddings`.
   */
  addTo(embeddings: Float32Array, dim: number, options?: AddToOptions): Float32Array;
  /**
   * A new Float32Array (or `out`) whose rows are [embedding row (dim floats) | PE row (peDim floats)].
   */
  concat(embeddings: Float32Array, dim: number, peDim: number, options?: EncodeOptions): Float32Array;
  /** The rotation M_k with PE(p + k) = M_k PE(p) for every p (the relative-position property). */
  shift(k: number, dim: number, options?: ShiftOptions): Float32Array;
  /** A reusable encoder; see Encoder. */
  encoder(options: SpecOptions & { dim: number }): Encoder;
}

/**
 * What `posenc/encoding`'s init() returns: every family of encodings (the paper's, rotary, ALiBi, 2D),
 * without the transformer (a smaller download than `posenc`).
 */
export interface PosencEncoding extends PosencSinusoidal, RotaryApi {}

/**
 * What `posenc`'s init() returns: every family of encodings (the paper's, rotary, ALiBi, 2D) and the
 * transformer layer and model.
 */
export interface Posenc extends PosencEncoding, LayerApi {}

export interface InitOptions {
  /** true: require the SIMD build (throws where unsupported); false: force the baseline build. Default: detect. */
  simd?: boolean;
  /**
   * Threads to run, the caller's included: an integer from 1 to 16, or 'auto' (min(4, cores) in
   * Node and on cross-origin isolated pages with the SIMD build, else 1, without an error).
   * Default 1. Above 1 loads the threaded build (SIMD + pthreads), which needs SharedArrayBuffer:
   * Node, or a cross-origin isolated page. Results are the same bits with any number of threads.
   */
  threads?: number | 'auto';
}

/** Loads the wasm module (the SIMD build where supported). */
export function init(options?: InitOptions): Promise<Posenc>;

/** Whether this engine validates wasm SIMD (the probe init() uses). */
export function simdSupported(): boolean;
