// Type declarations of posenc/encoding: the encodings without the transformer (written by hand;
// checked with tsc --strict in tests).

import type { InitOptions, PosencEncoding } from './index.js';

export type {
  AddToOptions,
  Encoder,
  EncodeOptions,
  Frequencies,
  InitOptions,
  Layout,
  OddDim,
  PosencEncoding,
  PosencSinusoidal,
  PresetInfo,
  PresetName,
  RowOptions,
  ShiftOptions,
  SpecOptions,
  Rotary,
  RotaryOptions,
  RotaryModelType,
  RotaryLayout,
  RopeScaling,
  RopeIndexOptions,
  RopeIndexResult,
  RopeIndexBatchResult,
  TensorLike,
} from './index.js';

/** Loads the encodings' wasm module (the SIMD build where supported), without the transformer. */
export function init(options?: InitOptions): Promise<PosencEncoding>;

/** Whether this engine validates wasm SIMD (the probe init() uses). */
export function simdSupported(): boolean;
