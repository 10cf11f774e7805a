// Compiled with `tsc --noEmit --strict` against the built dist/index.d.ts: every declared
// function and option is used as a user would, and misuse is rejected (@ts-expect-error).
import { init, simdSupported, type Encoder, type Posenc, type PresetInfo } from 'posenc';
import { init as initEncoding, type PosencEncoding } from 'posenc/encoding';

async function main(): Promise<void> {
  const supported: boolean = simdSupported();
  const pe: Posenc = await init({ simd: supported });
  const table: Float32Array = pe.encode(100, 50, { preset: 'vaswani', offset: 3 });
  pe.encode(4, 8, { positions: [0, 1, 2, 3], layout: 'split', frequencies: 'half', odd: 'zero-pad' });
  pe.encode(4, 8, { preset: 'fairseq', paddingMask: [1, 0, 0, true], paddingIdx: 1, out: new Float32Array(32) });
  pe.encode(4, 8, { base: 500, minTimescale: 2, positions: new Float64Array(4) });
  const emb = new Float32Array(64);
  const same: Float32Array = pe.addTo(emb, 8, { scale: Math.sqrt(8), offset: 1 });
  const joined: Float32Array = pe.concat(emb, 8, 4, { preset: 'whisper' });
  const m: Float32Array = pe.shift(3, 8, { form: 'matrix', layout: 'interleaved' });
  const presets: readonly PresetInfo[] = pe.presets;
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

  // posenc/encoding: the same encodings, no transformer.
  const only: PosencEncoding = await initEncoding({ simd: false });
  const row: Float32Array = only.encode(1, 8, { preset: 'whisper' });
  const asEncodings: PosencEncoding = pe; // the main entry's instance has every encoding function
  // @ts-expect-error: posenc/encoding has no transformer
  only.loadModel(new Uint8Array(8));
  void [table, same, joined, m, presets, disposed, row, asEncodings];
}

void main();
