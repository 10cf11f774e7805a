// Types of the rotary (RoPE), ALiBi and 2D sin-cos families (bindings/js/rotary.js, alibi.js,
// sincos2d.js; the C++ contracts in cpp/include/posenc/rotary/, alibi.hpp, sincos2d.hpp).

/**
 * 'half': pairs (i, i + rotaryDim/2) (GPT-NeoX, LLaMA rotate_half); 'interleaved': pairs (2i, 2i+1)
 * (GPT-J, RoFormer, Cohere, GLM, Llama 4); 'deinterleave': the pair read at (2i, 2i+1) is written to
 * (i, i + rotaryDim/2), cos/sin as 'half' (DeepSeek-V3's rope_interleave).
 */
export type RotaryLayout = 'half' | 'interleaved' | 'deinterleave';

/**
 * A float16 result (dtype 'float16'): a Float16Array where the runtime has one, else the float16
 * bits in a Uint16Array (declared without needing TypeScript's newer lib: never Float16Array without it).
 */
export type Float16Result = (typeof globalThis extends { Float16Array: { prototype: infer T } } ? T : never) | Uint16Array;

/** Hugging Face transformers' rope_type (modeling_rope_utils.py). */
export type RopeScalingType = 'default' | 'linear' | 'dynamic' | 'yarn' | 'llama3' | 'longrope';

/** Context extension, with the meanings and defaults of HF's rope_scaling keys. */
export interface RopeScaling {
  type: RopeScalingType;
  /** factor (1..1e6; longrope > 0). */
  factor?: number;
  /** original_max_position_embeddings: the context the model was trained with (dynamic, yarn, llama3, longrope). */
  originalMaxPositions?: number;
  /** llama3 low_freq_factor and high_freq_factor. */
  lowFreqFactor?: number;
  highFreqFactor?: number;
  /** yarn beta_fast (default 32) and beta_slow (default 1). */
  betaFast?: number;
  betaSlow?: number;
  /** yarn / longrope attention_factor (default: HF's formula). */
  attentionFactor?: number;
  /** yarn mscale and mscale_all_dim (DeepSeek style attention factor). */
  mscale?: number;
  mscaleAllDim?: number;
  /** yarn truncate (default true). */
  truncate?: boolean;
  /** longrope short_factor and long_factor, rotaryDim / 2 numbers each. */
  shortFactor?: ArrayLike<number>;
  longFactor?: ArrayLike<number>;
}

export interface RotaryOptions {
  /** Channels per head, 2..65536 (required without config or preset). */
  headDim?: number;
  /** theta, > 1. Default 10000. */
  base?: number;
  /** Channels that rotate: even, <= headDim. Default headDim (partial rotary leaves the rest unchanged). */
  rotaryDim?: number;
  /** Default 'half'. */
  layout?: RotaryLayout;
  scaling?: RopeScaling | null;
  /**
   * A model's Hugging Face config.json (object or JSON text): rope_theta, rope_scaling, head_dim,
   * partial_rotary_factor / rotary_pct / rotary_dim, ... Frequencies are then HF's float32 inv_freq
   * buffer, bit for bit; the other options override the config's values.
   */
  config?: object | string;
  /** A name of pe.rotaryPresets: that model's config (instead of config; other options override it). */
  preset?: RotaryPresetName;
  /**
   * With config or preset: the decoder layer (0-based). Required when the config's layers differ in
   * RoPE (Gemma 3, Llama 4, Cohere2, Qwen3-Next, ...); pe.rotary then returns null for a layer
   * without RoPE.
   */
  layer?: number;
  /** 'llama': read a model_type that is not in pe.rotaryModelTypes by Llama's rule instead of refusing it. */
  modelRule?: 'llama';
  /**
   * A vision tower's 2D RoPE (with headDim, a multiple of 4, and base only): HF's float32
   * frequencies of Qwen-VL's VisionRotaryEmbedding or Pixtral's, mropeSection [0, headDim / 4,
   * headDim / 4]; rows h and w of three positions rows. posenc/multimodal's rotary2d lays out the patches.
   */
  vision2d?: 'qwen' | 'pixtral';
}

/** A row of pe.rotaryModelTypes: a model_type pe.rotary reads, and how. */
export interface RotaryModelType {
  readonly modelType: string;
  /** The Hugging Face modeling file's family ('llama', 'gemma3', 'deepseek_v3', ...). */
  readonly family: string;
  readonly layout: RotaryLayout;
  /** Where the head dim comes from. */
  readonly headDim: string;
  /** partial_rotary_factor when the config gives none (the configuration class's default). */
  readonly partialRotaryFactor: number;
  /** Which layers have which RoPE. */
  readonly layers: string;
  /** How layers mask attention (pe.rotary's layerType; the window and chunk keys). */
  readonly attention: string;
  /** The multimodal RoPE rule, or null. */
  readonly multimodal: string | null;
}

/** The models of pe.rotaryPresets (their Hugging Face config.json, RoPE keys only). */
export type RotaryPresetName =
  | 'llama-2-7b'
  | 'llama-3.1-8b'
  | 'mistral-7b-v0.1'
  | 'mistral-nemo-2407'
  | 'qwen2-7b'
  | 'qwen2.5-7b-instruct-yarn'
  | 'phi-3-mini-128k-instruct'
  | 'gpt-oss-20b'
  | 'vicuna-7b-v1.5-16k'
  | 'gpt-neox-20b'
  | 'gpt-j-6b';

export interface RotaryRowOptions {
  /** Position of row 0 (rows are offset, offset + 1, ...). Default 0. */
  offset?: number;
  /**
   * One position per row instead of offset (each 0..2^31 - 1); for a multimodal RoPE
   * (rot.mropeSection) also three rows [t, h, w] of L positions each, or one typed array of 3 * L
   * (t row, then h, then w).
   */
  positions?: ArrayLike<number> | readonly [ArrayLike<number>, ArrayLike<number>, ArrayLike<number>];
}

/** A tensor as ort.Tensor and transformers.js' Tensor hold one (duck-typed; location 'cpu' or absent). */
export interface RotaryTensorLike<T> {
  readonly data: T;
  readonly dims: readonly number[];
  readonly location?: string;
}

/** What rot.apply and rot.cosSin return with as: 'tensor' (`new ort.Tensor(type, data, dims)` takes it). */
export interface RotaryFloatTensor {
  data: Float32Array;
  dims: number[];
  type: 'float32';
}

/** Position ids as ONNX and transformers.js hold them: numbers, BigInts, int64 / int32 / uint32 arrays. */
export type RotaryIds = ArrayLike<number> | ArrayLike<bigint> | BigInt64Array | Int32Array | Uint32Array;

/** rot.apply's order of x's axes: [seq, heads, headDim], [batch, seq, heads, headDim], [batch, heads, seq, headDim]. */
export type RotaryOrder = 'shd' | 'bshd' | 'bhsd';

/** The rows of each sequence of a batch (issue 25). */
export interface RotarySequenceOptions {
  /** Position of row 0 of every sequence, or one per sequence. Default 0. */
  offset?: number | RotaryIds | RotaryTensorLike<RotaryIds>;
  /**
   * As RotaryRowOptions' positions for every sequence, or one row per sequence: [batch, seq] (HF's
   * position_ids: an Array of rows, a flat list, or a tensor); for a multimodal RoPE [3, batch, seq].
   */
  positions?: RotaryIds | readonly RotaryIds[] | RotaryTensorLike<RotaryIds>;
  /** Sequences (default 1, or from x's dims, an offset list or a positions tensor). */
  batch?: number;
}

export interface RotaryApplyOptions extends RotarySequenceOptions {
  /** Heads of x (required without dims; else it must agree with them). */
  heads?: number;
  /** 'shd' (default), 'bshd' or 'bhsd'. */
  order?: RotaryOrder;
}

export interface RotaryCosSinOptions extends RotarySequenceOptions {
  /** 'hf' (default): [seq, rotaryDim], Hugging Face's; 'ort': [seq, rotaryDim / 2], ONNX Runtime's cos_cache / sin_cache. */
  cache?: 'hf' | 'ort';
  /** Arrays to write into (each batch * length * width floats); they are returned. */
  out?: { cos: Float32Array; sin: Float32Array };
}

/** rot.cosSin's options for 16-bit tables (dtype 'float16' or 'bfloat16'). */
export interface RotaryCosSinHalfOptions extends Omit<RotaryCosSinOptions, 'out'> {
  dtype: 'float16' | 'bfloat16';
  /** Arrays to write the bits into (each batch * length * width values); they are returned. */
  out?: { cos: Uint16Array | Float16Result; sin: Uint16Array | Float16Result };
}

/** rot.cosSin's 16-bit tables with as: 'tensor' (type 'float16': ort.Tensor takes it; 'bfloat16': bits). */
export interface RotaryHalfTensor {
  data: Uint16Array | Float16Result;
  dims: number[];
  type: 'float16' | 'bfloat16';
}

/** A rotary embedding owning wasm memory: call dispose() when done. */
export interface Rotary {
  /** The pe.rotaryModelTypes row that read the config (null for explicit options). */
  readonly modelType: string | null;
  /** The config's own layer type of the layer ('sliding_attention', 'full_attention', ...), or null. */
  readonly layerType: string | null;
  /** The factor the model's RoPE scaling puts on its softmax scale (DeepSeek-V3 yarn: mscale^2; else 1). */
  readonly softmaxScaleFactor: number;
  /** Multimodal RoPE: the frequencies of t, h and w (mrope_section), or null. */
  readonly mropeSection: readonly [number, number, number] | null;
  /** Multimodal RoPE: sections interleaved frequency by frequency (Qwen3-VL, Qwen3.5). */
  readonly mropeInterleaved: boolean;
  readonly headDim: number;
  readonly rotaryDim: number;
  readonly layout: RotaryLayout;
  readonly scaling: RopeScalingType;
  /** What cos and sin are multiplied by (1, or yarn / longrope's attention factor). */
  readonly attentionScaling: number;
  /** The rotaryDim / 2 frequencies used (radians per position; for dynamic / longrope the set of short sequences): a new copy on each read. */
  readonly inverseFrequencies: Float64Array;
  /**
   * The frequencies of a call whose largest position + 1 is sequenceLength (1..2^31): as
   * inverseFrequencies, except past the original context of 'dynamic' (a larger base) and
   * 'longrope' (the long factors), as Hugging Face picks them per call.
   */
  inverseFrequenciesFor(sequenceLength: number): Float64Array;
  readonly disposed: boolean;
  /**
   * In place on x, [L, heads, headDim] float32 row-major (heads required: no default): every
   * pair (x, y) of the rotating channels becomes A (x cos - y sin, y cos + x sin) at its row's
   * position. Returns x. Each output is within 2^-22 * A * |(x, y)| of the float64 rotation
   * (positions < 2^24).
   */
  apply(x: Float32Array, options: RotaryRowOptions & { heads: number }): Float32Array;
  /** A batch ('bshd', 'bhsd'), per-sequence offsets or positions: every order gives the bits of the 'shd' calls it stands for. */
  apply(x: Float32Array, options: RotaryApplyOptions & { heads: number; as?: 'array' }): Float32Array;
  /** x a tensor: its dims give the shape of the order (x.dims [seq, heads, headDim] for 'shd'). Returns x. */
  apply<T extends RotaryTensorLike<Float32Array>>(x: T, options?: RotaryApplyOptions & { as?: 'array' }): T;
  apply(x: Float32Array, options: RotaryApplyOptions & { heads: number; as: 'tensor' }): RotaryFloatTensor;
  apply(x: RotaryTensorLike<Float32Array>, options: RotaryApplyOptions & { as: 'tensor' }): RotaryFloatTensor;
  /**
   * 16-bit data in place (a Uint16Array of float16 / bf16 bits with its dtype, or a Float16Array):
   * each output the 16-bit value nearest to the float32 result of the same call on the decoded
   * values. Returns x (with as: 'tensor', { data: x, dims, type: dtype }).
   */
  apply<T extends Uint16Array | Float16Result>(x: T, options: RotaryApplyOptions & { heads: number; dtype: 'float16' | 'bfloat16'; as?: 'array' }): T;
  apply<T extends RotaryTensorLike<Uint16Array | Float16Result>>(x: T, options: RotaryApplyOptions & { dtype: 'float16' | 'bfloat16'; as?: 'array' }): T;
  apply(x: Uint16Array | Float16Result | RotaryTensorLike<Uint16Array | Float16Result>, options: RotaryApplyOptions & { dtype: 'float16' | 'bfloat16'; as: 'tensor' }): RotaryHalfTensor;
  /** cos and sin, Float32Array(length * rotaryDim) each, in Hugging Face's layout, times attentionScaling. */
  cosSin(length: number, options?: RotaryRowOptions & { dtype?: 'float32' }): { cos: Float32Array; sin: Float32Array };
  /** Per sequence [batch, length, width], ONNX Runtime's cache layout (width rotaryDim / 2), into out. */
  cosSin(length: number, options?: RotaryCosSinOptions & { as?: 'array'; dtype?: 'float32' }): { cos: Float32Array; sin: Float32Array };
  cosSin(length: number, options: RotaryCosSinOptions & { as: 'tensor'; dtype?: 'float32' }): { cos: RotaryFloatTensor; sin: RotaryFloatTensor };
  /**
   * The same tables as 16-bit values, each the float16 / bfloat16 nearest to the exact cos(p w),
   * sin(p w) (with attentionScaling != 1: to HF's float32 product), rounded once. `out` takes
   * Uint16Arrays (or Float16Arrays for float16) of exactly the size.
   */
  cosSin(length: number, options: RotaryCosSinHalfOptions & { dtype: 'bfloat16'; as?: 'array' }): { cos: Uint16Array; sin: Uint16Array };
  cosSin(length: number, options: RotaryCosSinHalfOptions & { as?: 'array' }): { cos: Float16Result; sin: Float16Result };
  cosSin(length: number, options: RotaryCosSinHalfOptions & { as: 'tensor' }): { cos: RotaryHalfTensor; sin: RotaryHalfTensor };
  dispose(): void;
  [Symbol.dispose](): void;
}

export type AlibiMode = 'causal' | 'symmetric';

/** A key padding mask's entries (1 = attend, 0 = padding): 0/1 numbers, booleans or BigInts. */
export type AlibiMaskValues = ArrayLike<number> | ArrayLike<boolean> | ArrayLike<bigint> | BigInt64Array;

export interface AlibiBiasOptions {
  mode?: AlibiMode;
  offset?: number;
  /**
   * Key padding mask [batch, keyLength]: an Array of rows, a flat list of `batch` rows, or a tensor
   * { data, dims: [batch, keyLength] } on the CPU (ort.Tensor, transformers.js' Tensor). The result
   * is [batch, heads, queryLength, keyLength], masked keys set to maskValue.
   */
  attentionMask?: AlibiMaskValues | ReadonlyArray<AlibiMaskValues> | { readonly data: AlibiMaskValues; readonly dims: readonly number[]; readonly location?: string };
  /** Rows of a flat mask (default 1); without a mask, that many copies. */
  batch?: number;
  /** What masked keys and the causal part hold: -Infinity (default) or a finite number, e.g. -65504. */
  maskValue?: number;
  /**
   * 'float32' (default), or 'float16' / 'bfloat16' bits: each value the 16-bit value nearest to the
   * exact -(slope * distance) of the float64 slope, rounded once; maskValue rounded once.
   */
  dtype?: 'float32' | 'float16' | 'bfloat16';
  as?: 'array' | 'tensor';
}

/** A result asked for with `as: 'tensor'`: `new ort.Tensor(type, data, dims)` takes it as it is. */
export interface AlibiTensor {
  readonly data: Float32Array;
  /** [batch (1 without a mask), heads, queryLength, keyLength]. */
  readonly dims: number[];
  readonly type: 'float32';
}

/** alibiBias's tensor with dtype 'float16' / 'bfloat16' (bits; a Float16Array where the engine has one). */
export interface AlibiHalfTensor<D, T extends 'float16' | 'bfloat16'> {
  readonly data: D;
  /** [batch (1 without a mask), heads, queryLength, keyLength]. */
  readonly dims: number[];
  readonly type: T;
}

export type Sincos2dPreset = 'mae' | 'timm';

export interface Encode2dOptions {
  /** 'mae' (facebookresearch/mae get_2d_sincos_pos_embed, default) or 'timm' (build_sincos2d_pos_embed). */
  preset?: Sincos2dPreset;
  /** Default 10000 (timm's temperature). */
  base?: number;
  /** A zero first row (MAE's cls_token). */
  clsToken?: boolean;
  /** timm only: the grid over [width, height]. */
  reverseCoord?: boolean;
  /** timm only: [sin a | cos a | sin b | cos b]. */
  interleaveSinCos?: boolean;
}

export interface RotaryApi {
  /** A rotary embedding from explicit options or a Hugging Face config. */
  rotary(options: RotaryOptions & { layer?: undefined }): Rotary;
  /** One decoder layer of a config: null when that layer has no RoPE. */
  rotary(options: RotaryOptions & { layer: number }): Rotary | null;
  /** The model types whose config.json pe.rotary reads, with the rule of each (frozen). */
  readonly rotaryModelTypes: readonly RotaryModelType[];
  /**
   * One decoder layer's attention mask as the model's masking code builds it: Uint8Array(queryLength *
   * keyLength), 1 where query i (at position offset + i) may attend to key j; null for a
   * linear-attention layer. keyLength defaults to offset + queryLength.
   */
  attentionMask(config: object | string, options: { layer?: number; queryLength: number; keyLength?: number; offset?: number }): Uint8Array | null;
  /** Without a config: the causal mask, limited to a sliding window or to chunks when given. */
  attentionMask(config: null, options: { queryLength: number; keyLength?: number; offset?: number; slidingWindow?: number; chunkSize?: number }): Uint8Array;
  /** Llama 4's NoPE-layer query temperature at positions offset .. offset + length - 1 (float32), or null. */
  queryScales(config: object | string, options: { layer?: number; length: number; offset?: number }): Float32Array | null;
  /**
   * Common models' config.json, the keys pe.rotary reads (frozen): pe.rotary({ preset: name }), or
   * pe.rotary({ config: { ...pe.rotaryPresets[name], ...changes } }).
   */
  readonly rotaryPresets: Readonly<Record<RotaryPresetName, Readonly<Record<string, unknown>>>>;
  /** ALiBi's slopes (the paper's get_slopes, float64), heads 1..65536. */
  alibiSlopes(heads: number): Float64Array;
  /**
   * ALiBi's bias [heads, queryLength, keyLength]: causal (default) -slope * (offset + i - j) for
   * j <= offset + i and maskValue (-Infinity) after; symmetric -slope * |offset + i - j|. With
   * attentionMask (or batch), [batch, heads, queryLength, keyLength].
   */
  alibiBias(heads: number, queryLength: number, keyLength: number, options?: AlibiBiasOptions & { dtype?: 'float32'; as?: 'array' }): Float32Array;
  alibiBias(heads: number, queryLength: number, keyLength: number, options: AlibiBiasOptions & { dtype?: 'float32'; as: 'tensor' }): AlibiTensor;
  /** The same bias as float16 / bfloat16 bits, each value the 16-bit value nearest to the exact -(slope * distance). */
  alibiBias(heads: number, queryLength: number, keyLength: number, options: AlibiBiasOptions & { dtype: 'bfloat16'; as?: 'array' }): Uint16Array;
  alibiBias(heads: number, queryLength: number, keyLength: number, options: AlibiBiasOptions & { dtype: 'float16'; as?: 'array' }): Float16Result;
  alibiBias(heads: number, queryLength: number, keyLength: number, options: AlibiBiasOptions & { dtype: 'bfloat16'; as: 'tensor' }): AlibiHalfTensor<Uint16Array, 'bfloat16'>;
  alibiBias(heads: number, queryLength: number, keyLength: number, options: AlibiBiasOptions & { dtype: 'float16'; as: 'tensor' }): AlibiHalfTensor<Float16Result, 'float16'>;
  /** A 2D sin-cos table: Float32Array(((clsToken ? 1 : 0) + height * width) * dim); dim a multiple of 4. */
  encode2d(height: number, width: number, dim: number, options?: Encode2dOptions & { dtype?: 'float32' }): Float32Array;
  /** The same table as float16 / bfloat16 values, each rounded once from the exact value (HalfOptions; no `out`). */
  encode2d(height: number, width: number, dim: number, options: Encode2dOptions & { dtype: 'bfloat16' }): Uint16Array;
  encode2d(height: number, width: number, dim: number, options: Encode2dOptions & { dtype: 'float16' | 'bfloat16' }): Float16Result;
}
