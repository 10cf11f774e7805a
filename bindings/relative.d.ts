// Type declarations of posenc/relative (written by hand; checked with tsc --strict in tests).

/** A result asked for with `as: 'tensor'`: `new ort.Tensor(type, data, dims)` takes it without a copy. */
export interface RelativeTensor<T, D extends string> {
  readonly data: T;
  readonly dims: number[];
  readonly type: D;
}

/** A tensor-like input ({ data, dims }: ort.Tensor, transformers.js' Tensor). */
export interface TensorLike<T> {
  readonly data: T;
  readonly dims: readonly number[];
  readonly location?: string;
}

/** T5's bucket setting (T5Attention._relative_position_bucket), explicit or from a config.json. */
export interface T5BucketOptions {
  /** relative_attention_num_buckets: 2..65536 (bidirectional: >= 4). Default 32. */
  numBuckets?: number;
  /** relative_attention_max_distance: > maxExact (numBuckets / 4 bidirectional, / 2 causal). Default 128. */
  maxDistance?: number;
  /** true: encoder self-attention (keys on both sides); false: decoder self-attention (causal). Default true. */
  bidirectional?: boolean;
  /** Position of query 0 (HF's cache_position[0]: incremental decoding). Default 0. */
  offset?: number;
  /** A T5-family config.json (model_type 't5', 'mt5', 'umt5', 'pix2struct'), object or JSON text, instead of the three settings. */
  config?: object | string;
  /** With config: which self-attention ('encoder' is bidirectional, 'decoder' causal; T5 cross-attention has no position bias). */
  attention?: 'encoder' | 'decoder';
}

export interface T5BucketsOptions extends T5BucketOptions {
  scheme?: 't5';
  dtype?: 'int32' | 'int64';
  as?: 'array' | 'tensor';
}

/** DeBERTa-v2 / v3 (build_relative_position with make_log_bucket_position). */
export interface DebertaBucketsOptions {
  scheme: 'deberta';
  /** position_buckets: > 0 log buckets of size positionBuckets; <= 0 plain query - key. Default 256. */
  positionBuckets?: number;
  /** max_relative_positions; < 1 means maxPositionEmbeddings. Default -1. */
  maxRelativePositions?: number;
  /** max_position_embeddings. Default 512. */
  maxPositionEmbeddings?: number;
  /** A config.json of model_type 'deberta-v2' (object or JSON text) instead of the three settings. */
  config?: object | string;
  /**
   * 'relative' (default): query - key, bucketed; 'c2p': clamp(relative + attSpan, 0, 2 attSpan - 1);
   * 'p2c': clamp(-relative + attSpan, ...), which is [keyLength, keyLength] when the lengths differ (HF's r_pos).
   */
  output?: 'relative' | 'c2p' | 'p2c';
  dtype?: 'int32' | 'int64';
  as?: 'array' | 'tensor';
}

export type RelativeBucketsOptions = T5BucketsOptions | DebertaBucketsOptions;

/** [queryLength, keyLength] row-major: T5's bucket of key - (offset + query), or DeBERTa's relative position / gather index. */
export declare function relativeBuckets(queryLength: number, keyLength: number, options?: RelativeBucketsOptions & { dtype?: 'int32'; as?: 'array' }): Int32Array;
export declare function relativeBuckets(queryLength: number, keyLength: number, options: RelativeBucketsOptions & { dtype: 'int64'; as?: 'array' }): BigInt64Array;
export declare function relativeBuckets(queryLength: number, keyLength: number, options: RelativeBucketsOptions & { dtype?: 'int32'; as: 'tensor' }): RelativeTensor<Int32Array, 'int32'>;
export declare function relativeBuckets(queryLength: number, keyLength: number, options: RelativeBucketsOptions & { dtype: 'int64'; as: 'tensor' }): RelativeTensor<BigInt64Array, 'int64'>;

export interface RelativeBiasOptions extends T5BucketOptions {
  /** Write into this array of heads * queryLength * keyLength values and return it (Uint16Array bits for the 16-bit dtypes). */
  out?: Float32Array | Uint16Array;
  /** 'tensor': { data, dims: [1, heads, queryLength, keyLength], type: dtype }. */
  as?: 'array' | 'tensor';
  /** 'float32' (default); 'float16' (Float16Array where the engine has one, else Uint16Array bits); 'bfloat16' (Uint16Array bits). */
  dtype?: 'float32' | 'float16' | 'bfloat16';
}

/** float16 values: a Float16Array where the engine has one (typed loosely: older TypeScript libs lack it), else their bits. */
export type Float16Data = Uint16Array | (ArrayLike<number> & { readonly buffer: ArrayBufferLike });

/**
 * T5Attention.compute_bias: [heads, queryLength, keyLength], each value the table entry
 * table[bucket * heads + head] (bit for bit). table: relative_attention_bias.weight,
 * [numBuckets, heads] row-major.
 */
export declare function relativeBias(table: Float32Array | TensorLike<Float32Array>, heads: number, queryLength: number, keyLength: number, options?: RelativeBiasOptions & { dtype?: 'float32'; as?: 'array' }): Float32Array;
export declare function relativeBias(table: Float32Array | TensorLike<Float32Array>, heads: number, queryLength: number, keyLength: number, options: RelativeBiasOptions & { dtype?: 'float32'; as: 'tensor' }): RelativeTensor<Float32Array, 'float32'>;
export declare function relativeBias(table: Float32Array | TensorLike<Float32Array>, heads: number, queryLength: number, keyLength: number, options: RelativeBiasOptions & { dtype: 'float16'; as?: 'array' }): Float16Data;
export declare function relativeBias(table: Float32Array | TensorLike<Float32Array>, heads: number, queryLength: number, keyLength: number, options: RelativeBiasOptions & { dtype: 'float16'; as: 'tensor' }): RelativeTensor<Float16Data, 'float16'>;
export declare function relativeBias(table: Float32Array | TensorLike<Float32Array>, heads: number, queryLength: number, keyLength: number, options: RelativeBiasOptions & { dtype: 'bfloat16'; as?: 'array' }): Uint16Array;
export declare function relativeBias(table: Float32Array | TensorLike<Float32Array>, heads: number, queryLength: number, keyLength: number, options: RelativeBiasOptions & { dtype: 'bfloat16'; as: 'tensor' }): RelativeTensor<Uint16Array, 'bfloat16'>;

/** The model_type values whose config.json relativeBuckets and relativeBias read. */
export declare const RELATIVE_MODEL_TYPES: readonly ('t5' | 'mt5' | 'umt5' | 'pix2struct' | 'deberta-v2')[];

/** The models whose ALiBi alibiModelBias builds. */
export declare const ALIBI_MODELS: readonly ('bloom' | 'falcon' | 'mpt')[];

export interface AlibiModelBiasOptions {
  /** 'bloom' / 'falcon' ([batch * heads, 1, keys]) or 'mpt' ([heads, 1, keys]), with heads; or a config. */
  model?: 'bloom' | 'falcon' | 'mpt';
  heads?: number;
  /** A whole config.json (model_type bloom, falcon with alibi true, mpt), or its JSON text. */
  config?: object | string;
  /** BLOOM / Falcon: the key padding mask [batch, keys] (1 = attend); rows, flat with batch, or a tensor. */
  attentionMask?: ArrayLike<number | bigint> | ReadonlyArray<ArrayLike<number | bigint>> | TensorLike<ArrayLike<number | bigint>>;
  batch?: number;
  /** MPT only: finite, > 0; default 8. */
  alibiBiasMax?: number;
  dtype?: 'float32' | 'float16' | 'bfloat16';
  as?: 'array' | 'tensor';
}

/** The ALiBi bias a model's own code builds (BLOOM / Falcon build_alibi_tensor, MPT build_mpt_alibi_tensor). */
export declare function alibiModelBias(keyLength: number, options: AlibiModelBiasOptions & { dtype?: 'float32'; as?: 'array' }): Float32Array;
export declare function alibiModelBias(keyLength: number, options: AlibiModelBiasOptions & { dtype?: 'float32'; as: 'tensor' }): RelativeTensor<Float32Array, 'float32'>;
export declare function alibiModelBias(keyLength: number, options: AlibiModelBiasOptions & { dtype: 'float16'; as?: 'array' }): Float16Data;
export declare function alibiModelBias(keyLength: number, options: AlibiModelBiasOptions & { dtype: 'float16'; as: 'tensor' }): RelativeTensor<Float16Data, 'float16'>;
export declare function alibiModelBias(keyLength: number, options: AlibiModelBiasOptions & { dtype: 'bfloat16'; as?: 'array' }): Uint16Array;
export declare function alibiModelBias(keyLength: number, options: AlibiModelBiasOptions & { dtype: 'bfloat16'; as: 'tensor' }): RelativeTensor<Uint16Array, 'bfloat16'>;
