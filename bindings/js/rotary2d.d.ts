// Types of rotary2d (bindings/js/rotary2d.js), exported by posenc/multimodal.

/** The vision towers rotary2d reads. */
export type Rotary2dModel = 'qwen2_vl' | 'qwen2_5_vl' | 'pixtral';

/** What rotary2d needs of a posenc instance (the main entry's or posenc/encoding's). */
export interface Rotary2dInstance {
  rotary(options: { headDim: number; base: number; vision2d: 'qwen' | 'pixtral' }): unknown;
}

export interface Rotary2dOptions {
  /** A whole config.json (its vision_config is read) or the vision_config itself; object or JSON text. */
  config?: object | string;
  /** The vision tower, when neither the config nor its vision_config has a model_type that says it. */
  model?: Rotary2dModel;
  /** Channels per head, a multiple of 4 (instead of the config's). */
  headDim?: number;
  /** theta, > 1 (Qwen-VL: 10000 always; Pixtral: rope_theta, default 10000). */
  base?: number;
  /** Qwen-VL: spatial_merge_size. */
  spatialMergeSize?: number;
  /** Qwen2.5-VL: window_size (pixels). */
  windowSize?: number;
  /** Qwen2.5-VL: patch_size (pixels). */
  patchSize?: number;
}

/** The patches of a call: Qwen-VL's grids, or one Pixtral image. */
export type Rotary2dGrid =
  | {
      /** [t, h, w] per image or video, in patches (h and w multiples of spatialMergeSize): triples, 3n integers, or a tensor [n, 3]. */
      gridThw: ArrayLike<number | bigint> | ArrayLike<ArrayLike<number | bigint>> | { data: ArrayLike<number | bigint>; dims: readonly number[] };
      /** 'patch' (default): rot_pos_emb's order; 'window': Qwen2.5-VL's attention order (get_window_index). */
      order?: 'patch' | 'window';
    }
  | {
      /** Pixtral: the image's height and width in patches. */
      height: number;
      width: number;
    };

/** A vision tower's 2D RoPE (owns wasm memory of the instance: call dispose() when done). */
export interface Rotary2d {
  readonly model: Rotary2dModel;
  readonly headDim: number;
  readonly base: number;
  /** Qwen-VL's spatial_merge_size, else null. */
  readonly spatialMergeSize: number | null;
  /** Qwen2.5-VL's window side in merged tokens, else null. */
  readonly windowTokens: number | null;
  /** Pixtral's image_size / patch_size when the config gives them, else null. */
  readonly maxPatchesPerSide: number | null;
  /** headDim / 2 frequencies (HF's float32 values): headDim / 4 for rows, then headDim / 4 for columns. */
  readonly inverseFrequencies: Float64Array;
  readonly disposed: boolean;
  /** The patches' row and column, in the call's order. */
  positions(grid: Rotary2dGrid): { h: Int32Array; w: Int32Array };
  /** Rotates x, [patches, heads, headDim] float32, in place; returns x. */
  apply(x: Float32Array, grid: Rotary2dGrid & { heads: number }): Float32Array;
  /** cos and sin, Float32Array(patches * headDim) each, in Hugging Face's layout. */
  cosSin(grid: Rotary2dGrid): { cos: Float32Array; sin: Float32Array };
  dispose(): void;
  [Symbol.dispose](): void;
}
