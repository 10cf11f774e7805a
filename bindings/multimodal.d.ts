// Type declarations of posenc/multimodal (written by hand; checked with tsc --strict in tests).
import type { RopeIndexApi, RopeIndexModelType } from './rope_index.js';

export type * from './rope_index.js';

/** Multimodal RoPE position ids of Qwen2-VL, Qwen2.5-VL, Qwen3-VL (and -MoE), as HF's get_rope_index. */
export declare const ropeIndex: RopeIndexApi['ropeIndex'];

/** The model_type values ropeIndex reads. */
export declare const ROPE_INDEX_MODEL_TYPES: readonly RopeIndexModelType[];

export type * from './rotary2d.js';
import type { Rotary2d, Rotary2dInstance, Rotary2dModel, Rotary2dOptions } from './rotary2d.js';

/** The 2D RoPE of a Qwen2-VL / Qwen2.5-VL / Pixtral vision tower, on a posenc instance (from init()). */
export declare function rotary2d(pe: Rotary2dInstance, options: Rotary2dOptions): Rotary2d;

/** The vision towers rotary2d reads. */
export declare const ROTARY2D_MODELS: readonly Rotary2dModel[];
