// Type declarations of posenc/multimodal (written by hand; checked with tsc --strict in tests).
import type { RopeIndexApi, RopeIndexModelType } from './rope_index.js';

export type * from './rope_index.js';

/** Multimodal RoPE position ids of Qwen2-VL, Qwen2.5-VL, Qwen3-VL (and -MoE), as HF's get_rope_index. */
export declare const ropeIndex: RopeIndexApi['ropeIndex'];

/** The model_type values ropeIndex reads. */
export declare const ROPE_INDEX_MODEL_TYPES: readonly RopeIndexModelType[];
