// Types of pe.ropeIndex (bindings/js/rope_index.js) and the tensor conventions (bindings/js/tensor.js).

/** A tensor as ort.Tensor and transformers.js' Tensor are: CPU data and dims (duck-typed). */
export interface TensorLike<T = IntegerArrayLike> {
  readonly data: T;
  readonly dims: readonly number[];
  /** onnxruntime's tensor location: anything but 'cpu' is refused before `data` is read. */
  readonly location?: string;
  readonly type?: string;
}

/** Integers: every entry checked (integral, in range); BigInts compared as BigInts, never wrapped. */
export type IntegerArrayLike =
  | ArrayLike<number>
  | ArrayLike<bigint>
  | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array
  | Float32Array | Float64Array | BigInt64Array | BigUint64Array;

/** One sequence ([L]) or a batch ([B, L]: an Array of rows, or a tensor of dims [B, L]). */
export type TokenIds = IntegerArrayLike | ReadonlyArray<IntegerArrayLike> | TensorLike;

/** [t, h, w] per image or video, in the order HF consumes them across the batch. */
export type GridThw = ReadonlyArray<readonly [number, number, number]> | IntegerArrayLike | TensorLike;

export type RopeIndexModelType = 'qwen2_vl' | 'qwen2_5_vl' | 'qwen3_vl' | 'qwen3_vl_moe';

/** The keys of a Qwen-VL config.json that get_rope_index reads (the rest is ignored). */
export interface RopeIndexConfig {
  model_type: RopeIndexModelType | string;
  /** Top level, else in text_config. */
  image_token_id?: number;
  video_token_id?: number;
  text_config?: { image_token_id?: number; video_token_id?: number; [key: string]: unknown };
  vision_config?: {
    spatial_merge_size?: number;
    /** Qwen2.5-VL only (its config.json: 2). */
    tokens_per_second?: number;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface RopeIndexOptions {
  /** Token ids: [L] (one sequence) or [B, L] (a batch), int32 range. */
  inputIds: TokenIds;
  /** HF's image_grid_thw [n, 3]: one row per run of image tokens. Giving it (even empty) selects the multimodal path. */
  imageGridThw?: GridThw | null;
  /** HF's video_grid_thw [n, 3]: one row per video (Qwen3-VL: each frame its own run of video tokens). */
  videoGridThw?: GridThw | null;
  /** Qwen2.5-VL: seconds per temporal patch, one per video (the processor's float32 second_per_grid_ts). */
  secondPerGridTs?: ArrayLike<number> | Float32Array | Float64Array | TensorLike<ArrayLike<number>> | null;
  /** 1 keep, 0 padding; the dims of inputIds. */
  attentionMask?: TokenIds | null;
  /** 'int32' (default): Int32Array; 'int64': BigInt64Array. */
  dtype?: 'int32' | 'int64';
  /** 'array' (default): typed arrays; 'tensor': { data, dims, type } for new ort.Tensor(type, data, dims). */
  as?: 'array' | 'tensor';
}

/** An integer output in tensor form: `new ort.Tensor(t.type, t.data, t.dims)` takes it without a copy. */
export interface IntegerTensor<D extends Int32Array | BigInt64Array = Int32Array | BigInt64Array> {
  data: D;
  dims: number[];
  type: D extends BigInt64Array ? 'int64' : 'int32';
}

type Out<O, D extends Int32Array | BigInt64Array> = O extends { as: 'tensor' } ? IntegerTensor<D> : D;
type Data<O> = O extends { dtype: 'int64' } ? BigInt64Array : Int32Array;

/** One sequence: positions 3 * L (the t row, then h, then w; tensor dims [3, L]). */
export interface RopeIndexResult<P = Int32Array | BigInt64Array | IntegerTensor> {
  positions: P;
  /** max position + 1 - kept tokens (text-only path: - L); decoding adds it to the next positions. */
  ropeDelta: number;
}

/** A batch: positions 3 * B * L in HF's [3, B, L] order; one delta per sequence (tensor dims [B, 1]). */
export interface RopeIndexBatchResult<
  P = Int32Array | BigInt64Array | IntegerTensor,
  R = Int32Array | BigInt64Array | IntegerTensor,
> {
  positions: P;
  ropeDeltas: R;
}

type Batched<O> = O extends { inputIds: ReadonlyArray<IntegerArrayLike> } ? true
  : O extends { inputIds: TensorLike } ? boolean : false;

export interface RopeIndexApi {
  /**
   * Multimodal RoPE position ids of Qwen2-VL, Qwen2.5-VL, Qwen3-VL (and -MoE), as Hugging Face
   * transformers' get_rope_index computes them. Pure JavaScript.
   */
  ropeIndex<O extends RopeIndexOptions>(
    config: RopeIndexConfig,
    options: O,
  ): Batched<O> extends true
    ? RopeIndexBatchResult<Out<O, Data<O>>, Out<O, Data<O>>>
    : Batched<O> extends false
      ? RopeIndexResult<Out<O, Data<O>>>
      : RopeIndexResult<Out<O, Data<O>>> | RopeIndexBatchResult<Out<O, Data<O>>, Out<O, Data<O>>>;
}
