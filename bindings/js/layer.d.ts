// Types of the transformer encoder layer and the model (bindings/js/layer.js, model.js); index.d.ts
// re-exports them and adds encoderLayer / loadModel to the API interface.

import type { IntegerArrayLike, TensorLike } from './rope_index.js';

/** Numbers of one sequence: an Array, any typed array (int64 ones too) or a tensor of dims [n] or [1, n]. */
export type SequenceValues = ArrayLike<number> | ArrayLike<bigint> | BigInt64Array | BigUint64Array | TensorLike<ArrayLike<number> | ArrayLike<bigint>>;

/** The twelve state_dict names of PyTorch's nn.TransformerEncoderLayer. */
export type EncoderLayerWeightName =
  | 'self_attn.in_proj_weight' // [3 dModel, dModel]
  | 'self_attn.in_proj_bias' // [3 dModel]
  | 'self_attn.out_proj.weight' // [dModel, dModel]
  | 'self_attn.out_proj.bias' // [dModel]
  | 'linear1.weight' // [ffDim, dModel]
  | 'linear1.bias' // [ffDim]
  | 'linear2.weight' // [dModel, ffDim]
  | 'linear2.bias' // [dModel]
  | 'norm1.weight'
  | 'norm1.bias'
  | 'norm2.weight'
  | 'norm2.bias'; // [dModel] each

export interface EncoderLayerConfig {
  /** Model width, 1..8192, a multiple of heads. */
  dModel: number;
  /** Attention heads, 1..256. */
  heads: number;
  /** Feed-forward width (PyTorch's dim_feedforward), 1..65536. */
  ffDim: number;
  /** Pre-norm (true) or post-norm (false, PyTorch's default). */
  normFirst?: boolean;
  /** 'relu' (default) or 'gelu' (exact erf GELU, PyTorch's default GELU). */
  activation?: 'relu' | 'gelu';
  /** Layer norm epsilon, default 1e-5. */
  layerNormEps?: number;
  /**
   * Positions inside the attention: 'none' (default: the layer is permutation-equivariant),
   * 'rotary' (q and k of each head rotated by their row's position, HF LLaMA's rotate_half or
   * GPT-J's interleaved pairs) or 'alibi' (a per-head linear bias by query-key distance).
   */
  position?: PositionMethod;
  /** rotary only: the base, finite and > 1. Default 10000. */
  ropeTheta?: number;
  /** rotary only: leading dims of each head that rotate, even, 0..dModel/heads; 0 (default) = all. */
  rotaryDim?: number;
  /** rotary only: 'half' (default, pairs (i, i + r/2)) or 'interleaved' (pairs (2i, 2i + 1)). */
  rotaryLayout?: RotaryLayoutName;
  /** alibi only: 'causal' (default, -m (i - j) for keys j <= i) or 'symmetric' (-m |i - j|). */
  alibiMode?: AlibiModeName;
}

export type PositionMethod = 'none' | 'rotary' | 'alibi';
export type RotaryLayoutName = 'half' | 'interleaved';
export type AlibiModeName = 'causal' | 'symmetric';

export interface EncoderLayerOptions {
  config: EncoderLayerConfig;
  /**
   * Every weight, row-major float32, shaped as in the PyTorch state_dict, each finite (a NaN or
   * infinite element throws a RangeError naming it). A missing or unknown tensor name throws a
   * TypeError, a wrongly sized tensor a RangeError, each naming the tensor.
   */
  weights: Record<EncoderLayerWeightName, Float32Array>;
}

export interface ForwardOptions {
  /** Hide keys after each query (PyTorch's generate_square_subsequent_mask). Default false. */
  causal?: boolean;
  /**
   * One entry per token, each 0, 1, false or true; true / 1 hides that key (PyTorch's
   * src_key_padding_mask). Other values throw a RangeError naming the entry.
   */
  keyPaddingMask?: ArrayLike<boolean | number> | SequenceValues;
  /**
   * Row i is at position positionOffset + i for the rotary or ALiBi step (and, for a model, the
   * sinusoidal table). Default 0. Layer: finite, |offset| <= 2^31 - 1; model: >= 0 and the last
   * row at most 2^31 - 1.
   */
  positionOffset?: number;
}

export interface LayerForwardOptions extends ForwardOptions {
  /** One position per row (finite, |p| <= 2^31 - 1), instead of positionOffset + row. */
  positions?: SequenceValues;
}

export interface EncoderLayer {
  readonly config: Readonly<Required<EncoderLayerConfig>>;
  /** x: L x dModel row-major (or a tensor of dims [L, dModel] or [1, L, dModel]). Returns a new Float32Array (L x dModel). */
  forward(x: Float32Array | TensorLike<Float32Array>, options?: LayerForwardOptions): Float32Array;
  /** The attention probabilities [heads x L x L] of the last forward (a copy), or null before one. */
  attention(): Float32Array | null;
  /** True after dispose(). */
  readonly disposed: boolean;
  /** Frees the wasm memory; later calls throw. Calling it twice is harmless. */
  dispose(): void;
  [Symbol.dispose](): void;
}

export interface ModelConfig {
  vocabSize: number;
  numClasses: number;
  numLayers: number;
  dModel: number;
  heads: number;
  ffDim: number;
  normFirst: boolean;
  activation: 'relu' | 'gelu';
  layerNormEps: number;
  embeddingScale: number;
  /** A posenc preset name, 'rotary', 'alibi' or 'none' (metadata positional_encoding). */
  positionalEncoding: string;
  /** The layers' position step: 'rotary' or 'alibi' for those files, else 'none'. */
  position: PositionMethod;
  /** metadata rope_theta (default 10000). */
  ropeTheta: number;
  /** Rotated dims per head, resolved (partial_rotary_factor x head size); 0 unless rotary. */
  rotaryDim: number;
  /** metadata rotary_layout. */
  rotaryLayout: RotaryLayoutName;
  /** metadata alibi_mode. */
  alibiMode: AlibiModeName;
  /** metadata task (e.g. 'copy-back'), or null. */
  task: string | null;
  /** metadata symbols as a number, or null. */
  symbols: number | null;
  /** metadata copy_distance, or null. */
  copyDistance: number | null;
  /** metadata train_max_length (the longest sequence seen in training), or null. */
  trainMaxLength: number | null;
}

export interface ModelForwardOptions extends ForwardOptions {
  /** false: leave the positional encoding out (to see what it does). Default true. */
  positionalEncoding?: boolean;
  /** Alias of positionalEncoding. */
  pe?: boolean;
}

export interface Model {
  readonly config: Readonly<ModelConfig>;
  /** The vocabulary from the file's metadata (may be empty). */
  readonly vocab: readonly string[];
  /** The class names from the file's metadata (may be empty). */
  readonly labels: readonly string[];
  /** Token ids (1 to 8192 integers, each 0..vocabSize-1). Returns logits, L x numClasses, a new Float32Array. */
  forward(tokens: Int32Array | Uint32Array | BigInt64Array | BigUint64Array | readonly (number | bigint)[] | TensorLike<IntegerArrayLike>, options?: ModelForwardOptions): Float32Array;
  /**
   * Attention probabilities of the last forward (copies): of one layer [heads x L x L], or, with no
   * argument, of every layer [numLayers x heads x L x L]. null before any forward.
   */
  attention(layer?: number): Float32Array | null;
  /** True after dispose(). */
  readonly disposed: boolean;
  /** Frees the wasm memory; later calls throw. Calling it twice is harmless. */
  dispose(): void;
  [Symbol.dispose](): void;
}

export interface LayerApi {
  /** A PyTorch nn.TransformerEncoderLayer (eval mode) from its config and state_dict tensors. */
  encoderLayer(options: EncoderLayerOptions): EncoderLayer;
  /**
   * A model from the bytes of a .safetensors file (README "A model from a file" for its layout,
   * "Weights and bad input" for what is refused). A bad file throws a RangeError
   * naming the tensor, metadata key or part of the file; a wrong argument type a TypeError.
   */
  loadModel(bytes: Uint8Array | ArrayBuffer | SharedArrayBuffer): Model;
}
