// Compiled with `tsc --noEmit --strict` against the built dist/index.d.ts: every declared
// function and option is used as a user would, and misuse is rejected (@ts-expect-error).
import { init, simdSupported, type Encoder, type Posenc, type PresetInfo, type EncoderLayerWeightName } from 'posenc';
import { init as initEncoding, type PosencEncoding } from 'posenc/encoding';
import type { Float16Result, PosencSinusoidal, Rotary, RotaryModelType } from 'posenc';
import type { Rotary as EncodingRotary } from 'posenc/encoding';
import { ropeIndex, ROPE_INDEX_MODEL_TYPES, rotary2d, ROTARY2D_MODELS, type RopeIndexResult, type Rotary2d } from 'posenc/multimodal';
import { alibiModelBias, ALIBI_MODELS, relativeBias, relativeBuckets, RELATIVE_MODEL_TYPES, type RelativeTensor } from 'posenc/relative';

/** posenc/relative: T5 and DeBERTa buckets and T5's bias, as arrays and as tensors. */
function relative(): void {
  const bloom: Float32Array = alibiModelBias(16, { config: { model_type: 'bloom', n_head: 16 }, attentionMask: [[1, 1, 0, 1]] });
  const mpt: RelativeTensor<Float32Array, 'float32'> = alibiModelBias(16, { model: 'mpt', heads: 8, alibiBiasMax: 8, as: 'tensor' });
  const falcon: Uint16Array = alibiModelBias(16, { model: 'falcon', heads: 8, dtype: 'bfloat16' });
  const mptHalf: 'float16' = alibiModelBias(16, { model: 'mpt', heads: 8, dtype: 'float16', as: 'tensor' }).type;
  const which: readonly string[] = ALIBI_MODELS;
  void [bloom, mpt, falcon, mptHalf, which];
  const b: Int32Array = relativeBuckets(4, 6);
  const b64: BigInt64Array = relativeBuckets(4, 6, { numBuckets: 32, maxDistance: 128, bidirectional: false, offset: 3, dtype: 'int64' });
  const t: RelativeTensor<Int32Array, 'int32'> = relativeBuckets(4, 6, { config: { model_type: 't5' }, attention: 'decoder', as: 'tensor' });
  const d: Int32Array = relativeBuckets(8, 8, { scheme: 'deberta', positionBuckets: 256, maxRelativePositions: 512, output: 'c2p' });
  const bias: Float32Array = relativeBias(new Float32Array(32 * 2), 2, 4, 6, { out: new Float32Array(48) });
  const tensor: RelativeTensor<Float32Array, 'float32'> = relativeBias({ data: new Float32Array(64), dims: [32, 2] }, 2, 4, 6, { as: 'tensor' });
  const types: readonly string[] = RELATIVE_MODEL_TYPES;
  const half = relativeBias(new Float32Array(64), 2, 4, 6, { dtype: 'float16' });
  const bf: RelativeTensor<Uint16Array, 'bfloat16'> = relativeBias(new Float32Array(64), 2, 4, 6, { dtype: 'bfloat16', as: 'tensor' });
  void [half, bf];
  // @ts-expect-error output is a DeBERTa option
  relativeBuckets(4, 6, { output: 'c2p' });
  // @ts-expect-error heads is required
  relativeBias(new Float32Array(64), undefined, 4, 6);
  void [b, b64, t, d, bias, tensor, types];
}
void relative;

/** rotary2d of posenc/multimodal on an instance. */
function vision(pe: Posenc): void {
  const r: Rotary2d = rotary2d(pe, { model: 'qwen2_vl', headDim: 80, spatialMergeSize: 2 });
  const x = new Float32Array(24 * 2 * 80);
  const y: Float32Array = r.apply(x, { heads: 2, gridThw: [[1, 4, 6]] });
  const { cos, sin } = r.cosSin({ gridThw: [[1, 4, 6]], order: 'patch' });
  const { h, w } = r.positions({ gridThw: { data: BigInt64Array.of(1n, 4n, 6n), dims: [1, 3] } });
  const p: Rotary2d = rotary2d(pe, { config: { vision_config: { model_type: 'pixtral', head_dim: 64 } } });
  const pc: Float32Array = p.cosSin({ height: 3, width: 5 }).cos;
  const rot = pe.rotary({ headDim: 64, vision2d: 'pixtral' });
  const models: readonly string[] = ROTARY2D_MODELS;
  // @ts-expect-error apply needs heads
  r.apply(x, { gridThw: [[1, 4, 6]] });
  // @ts-expect-error not a vision rule
  pe.rotary({ headDim: 64, vision2d: 'siglip' });
  void [y, cos, sin, h, w, pc, rot, models];
  r.dispose();
}
void vision;

/** The model rules, per layer (pe.rotary with layer may give null), masks and query scales. */
function modelRules(pe: Posenc): void {
  const config = { model_type: 'gemma3_text', hidden_size: 64, head_dim: 16, num_attention_heads: 4, num_hidden_layers: 6 };
  const rot: Rotary | null = pe.rotary({ config, layer: 0 });
  if (rot) {
    const t: string | null = rot.layerType;
    const m: string | null = rot.modelType;
    const f: number = rot.softmaxScaleFactor;
    const s: readonly [number, number, number] | null = rot.mropeSection;
    rot.apply(new Float32Array(32), { heads: 1, positions: [[0, 1], [0, 1], [0, 1]] });
    rot.dispose();
  }
  const whole: Rotary = pe.rotary({ config: { hidden_size: 64, num_attention_heads: 4 }, modelRule: 'llama' });
  whole.dispose();
  // @ts-expect-error: with layer, the result may be null
  const notNull: Rotary = pe.rotary({ config, layer: 1 });
  const types: readonly RotaryModelType[] = pe.rotaryModelTypes;
  const mask: Uint8Array | null = pe.attentionMask(config, { layer: 0, queryLength: 4, offset: 2 });
  const scales: Float32Array | null = pe.queryScales(config, { layer: 0, length: 4 });
  const other: EncodingRotary | null = null;
  const ids: RopeIndexResult = ropeIndex({ model_type: 'qwen2_vl', image_token_id: 1, video_token_id: 2, vision_config: { spatial_merge_size: 2 } }, { inputIds: [5, 6] });
  const pos: Int32Array | BigInt64Array | object = ids.positions;
  const known: readonly string[] = ROPE_INDEX_MODEL_TYPES;
  void [notNull, types, mask, scales, other, pos, known];
}
void modelRules;

async function main(): Promise<void> {
  const supported: boolean = simdSupported();
  const pe: Posenc = await init({ simd: supported });
  const table: Float32Array = pe.encode(100, 50, { preset: 'vaswani', offset: 3 });
  pe.encode(4, 8, { positions: [0, 1, 2, 3], layout: 'split', frequencies: 'half', odd: 'zero-pad' });
  pe.encode(4, 8, { preset: 'fairseq', paddingMask: [1, 0, 0, true], paddingIdx: 1, out: new Float32Array(32) });
  pe.encode(4, 8, { base: 500, minTimescale: 2, positions: new Float64Array(4) });
  const half16: Float16Result = pe.encode(4, 8, { dtype: 'float16', offset: 2 });
  const bf16: Uint16Array = pe.encode(4, 8, { dtype: 'bfloat16', out: new Uint16Array(32) });
  const encHalf: Float16Result = pe.encoder({ dim: 8 }).encode(2, { dtype: 'float16' });
  // @ts-expect-error: a 16-bit dtype does not return a Float32Array
  const notF32: Float32Array = pe.encode(4, 8, { dtype: 'float16' });
  const emb = new Float32Array(64);
  const same: Float32Array = pe.addTo(emb, 8, { scale: Math.sqrt(8), offset: 1 });
  const joined: Float32Array = pe.concat(emb, 8, 4, { preset: 'whisper' });
  const m: Float32Array = pe.shift(3, 8, { form: 'matrix', layout: 'interleaved' });
  const presets: readonly PresetInfo[] = pe.presets;
  const realFrequencies: boolean = presets[0].exactFrequencies;
  const enc: Encoder = pe.encoder({ dim: 8, preset: 'tensor2tensor', base: 10000 });
  enc.encode(2, { offset: 5, out: new Float32Array(16) });
  enc.addTo(emb, { scale: 2, paddingMask: [0, 0, 0, 0, 0, 0, 0, 1] });
  enc.concat(emb, 8);
  enc.shift(1, { form: 'blocks' });
  enc.dispose();
  enc[Symbol.dispose]();
  const disposed: boolean = enc.disposed;

  // @ts-expect-error: unknown preset
  pe.encode(1, 8, { preset: 'bert' });
  // @ts-expect-error: embeddings must be a Float32Array
  pe.addTo([1, 2, 3], 3);
  // @ts-expect-error: scale is not an encode option
  pe.encode(1, 8, { scale: 2 });
  // @ts-expect-error: dim is required
  pe.encoder({ preset: 'vaswani' });
  // @ts-expect-error: simd is a boolean
  await init({ simd: 'yes' });
  // The threaded build: a thread count, what runs, and stopping its workers.
  const threaded: Posenc = await init({ threads: 2 });
  const running: number = threaded.threads;
  void running;
  threaded.dispose();
  // @ts-expect-error: threads is a number or 'auto'
  await init({ threads: 'all' });

  // posenc/encoding: the same encodings, no transformer.
  const only: PosencEncoding = await initEncoding({ simd: false });
  const row: Float32Array = only.encode(1, 8, { preset: 'whisper' });
  const asSinusoidal: PosencSinusoidal = pe; // both entries have the paper's encodings
  const alsoSinusoidal: PosencSinusoidal = only;
  const asEncoding: PosencEncoding = pe; // posenc has every family posenc/encoding has
  const rotaryInMain = pe.rotary({ headDim: 64 });
  rotaryInMain.dispose();
  // @ts-expect-error: posenc/encoding has no transformer
  only.loadModel(new Uint8Array(8));
  // @ts-expect-error: posenc/encoding has no transformer
  void only.encoderLayer;
  void [table, same, joined, m, presets, realFrequencies, disposed, row, asSinusoidal, alsoSinusoidal, asEncoding];
}

void main();

// The rotary, ALiBi and 2D families, from either entry.
async function families(fromMain: boolean) {
  const pe: PosencEncoding = fromMain ? await init() : await initEncoding();
  const rot = pe.rotary({ headDim: 128, scaling: { type: 'yarn', factor: 4, originalMaxPositions: 4096 } });
  const fromConfig = pe.rotary({ config: { rope_theta: 500000, hidden_size: 4096, num_attention_heads: 32 }, layout: 'half' });
  const q: Float32Array = rot.apply(new Float32Array(2 * 4 * 128), { heads: 4, offset: 10 });
  const { cos, sin } = rot.cosSin(16, { positions: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] });
  const qt = { data: new Float32Array(2 * 4 * 3 * 128), dims: [2, 4, 3, 128], location: 'cpu' };
  const same: typeof qt = rot.apply(qt, { order: 'bhsd', positions: { data: new BigInt64Array(6), dims: [2, 3] } });
  const qd: Float32Array = rot.apply(new Float32Array(2 * 3 * 4 * 128), { order: 'bshd', batch: 2, heads: 4, offset: [0, 5], as: 'tensor' }).data;
  const ortCache: Float32Array = rot.cosSin(3, { offset: new Int32Array([0, 5]), cache: 'ort', out: { cos: new Float32Array(384), sin: new Float32Array(384) } }).cos;
  const dims: number[] = rot.cosSin(3, { positions: [[0, 1, 2], [4, 5, 6]], as: 'tensor' }).sin.dims;
  const cos16: Float16Result = rot.cosSin(8, { offset: 3, dtype: 'float16' }).cos;
  const sinBf16: Uint16Array = rot.cosSin(8, { dtype: 'bfloat16', cache: 'ort', out: { cos: new Uint16Array(512), sin: new Uint16Array(512) } }).sin;
  const t16: 'float16' | 'bfloat16' = rot.cosSin(8, { dtype: 'float16', as: 'tensor' }).cos.type;
  const q16: Uint16Array = rot.apply(new Uint16Array(2 * 4 * 128), { heads: 4, dtype: 'float16' });
  const q16t: 'float16' | 'bfloat16' = rot.apply({ data: new Uint16Array(2 * 4 * 128), dims: [1, 2, 4, 128] }, { order: 'bshd', dtype: 'bfloat16', as: 'tensor' }).type;
  // @ts-expect-error a 16-bit table does not go into Float32Arrays
  rot.cosSin(8, { dtype: 'float16', out: { cos: new Float32Array(1024), sin: new Float32Array(1024) } });
  // @ts-expect-error no such order
  rot.apply(qt, { order: 'sbhd' });
  const llama = pe.rotary({ preset: 'llama-3.1-8b' });
  const neox = pe.rotary({ config: { ...pe.rotaryPresets['gpt-neox-20b'], rotary_pct: 0.5 } });
  llama.dispose();
  neox.dispose();
  // @ts-expect-error: not a preset name
  pe.rotary({ preset: 'llama-4' });
  const w: Float64Array = fromConfig.inverseFrequencies;
  const a: number = rot.attentionScaling;
  rot.dispose();
  fromConfig[Symbol.dispose]();
  const slopes: Float64Array = pe.alibiSlopes(12);
  const bias: Float32Array = pe.alibiBias(12, 8, 8, { mode: 'symmetric', offset: 0 });
  const padded: Float32Array = pe.alibiBias(12, 8, 8, { attentionMask: [[0, 1, 1, 1, 1, 1, 1, 1]], maskValue: -65504 });
  const paddedTensor: { data: Float32Array; dims: number[]; type: 'float32' } = pe.alibiBias(12, 1, 8, {
    attentionMask: { data: new BigInt64Array(16), dims: [2, 8], location: 'cpu' },
    as: 'tensor',
  });
  const flatMask: Float32Array = pe.alibiBias(12, 1, 8, { attentionMask: new Uint8Array(16), batch: 2 });
  const biasBf16: Uint16Array = pe.alibiBias(12, 8, 8, { dtype: 'bfloat16', maskValue: -65504 });
  const biasF16: Float16Result = pe.alibiBias(12, 8, 8, { dtype: 'float16' });
  const biasF16Tensor: { data: Float16Result; dims: number[]; type: 'float16' } = pe.alibiBias(12, 8, 8, { dtype: 'float16', as: 'tensor' });
  const biasBf16Tensor: { data: Uint16Array; type: 'bfloat16' } = pe.alibiBias(12, 8, 8, { dtype: 'bfloat16', as: 'tensor' });
  // @ts-expect-error: a 16-bit alibiBias is no Float32Array
  const biasWrong: Float32Array = pe.alibiBias(12, 8, 8, { dtype: 'float16' });
  // @ts-expect-error: maskValue is a number
  pe.alibiBias(1, 1, 1, { maskValue: '-inf' });
  const grid: Float32Array = pe.encode2d(14, 14, 768, { preset: 'mae', clsToken: true });
  const grid16: Uint16Array = pe.encode2d(14, 14, 768, { dtype: 'bfloat16' });
  // @ts-expect-error: unknown layout
  pe.rotary({ headDim: 64, layout: 'zigzag' });
  // @ts-expect-error: unknown scaling type
  pe.rotary({ headDim: 64, scaling: { type: 'ntk' } });
  // @ts-expect-error: mode is 'causal' or 'symmetric'
  pe.alibiBias(1, 1, 1, { mode: 'future' });
  void [q, cos, sin, w, a, slopes, bias, grid, padded, paddedTensor, flatMask, biasBf16, biasF16, biasF16Tensor, biasBf16Tensor, biasWrong];
}
void families(true);
void families(false);

// Positions inside the attention: a rotary or ALiBi layer, offsets, explicit positions, and the
// metadata of a model file.
async function positionsInAttention(weights: Record<EncoderLayerWeightName, Float32Array>, bytes: Uint8Array) {
  const pe = await init();
  const rotary = pe.encoderLayer({
    config: { dModel: 8, heads: 2, ffDim: 16, position: 'rotary', ropeTheta: 500000, rotaryDim: 2, rotaryLayout: 'interleaved' },
    weights,
  });
  const y: Float32Array = rotary.forward(new Float32Array(24), { causal: true, positionOffset: 100 });
  rotary.forward(new Float32Array(24), { positions: [0, 5, 9] });
  const method: 'none' | 'rotary' | 'alibi' = rotary.config.position;
  const alibi = pe.encoderLayer({ config: { dModel: 8, heads: 2, ffDim: 16, position: 'alibi', alibiMode: 'symmetric' }, weights });
  // @ts-expect-error: not a position method
  pe.encoderLayer({ config: { dModel: 8, heads: 2, ffDim: 16, position: 'xpos' }, weights });
  const model = pe.loadModel(bytes);
  model.forward([1, 2, 3], { causal: true, positionOffset: 32 });
  // @ts-expect-error: a model takes an offset, not explicit positions
  model.forward([1, 2, 3], { positions: [0, 1, 2] });
  const longest: number | null = model.config.trainMaxLength;
  const symbols: number | null = model.config.symbols;
  const theta: number = model.config.ropeTheta;
  void [y, method, alibi, longest, symbols, theta];
}
void positionsInAttention;

// Integer ids and tensors (issue 25): int64 positions, masks and tokens; tensors of one sequence.
{
  const ids = await init();
  ids.encode(3, 8, { positions: BigInt64Array.of(0n, 1n, 2n) });
  ids.encode(3, 8, { positions: { data: Int32Array.of(0, 1, 2), dims: [1, 3] } });
  ids.encode(3, 8, { preset: 'fairseq', paddingMask: BigInt64Array.of(0n, 1n, 0n) });
}
{
  const pm = await init();
  const causal: Uint8Array = pm.attentionMask(null, { queryLength: 4, slidingWindow: 2 });
  void causal;
}
// threads: 'auto' (issue 26): min(4, cores) where threads can run, else 1; both entries.
{
  const auto: Posenc = await init({ threads: 'auto' });
  const autoEncoding: PosencEncoding = await initEncoding({ threads: 'auto', simd: true });
  const resolved: number = auto.threads + autoEncoding.threads;
  void resolved;
  auto.dispose();
  autoEncoding.dispose();
}
