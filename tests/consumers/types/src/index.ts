// Typed use of posenc as a user writes it. Compiled with tsc --noEmit --strict under
// moduleResolution "bundler" and "nodenext": both must find dist/index.d.ts through the package's
// exports map ("types" condition), not through a path mapping.
import { init, simdSupported, type Encoder, type EncodeOptions, type Posenc, type PresetName } from 'posenc';

export async function run(): Promise<number> {
  const pe: Posenc = await init(simdSupported() ? undefined : { simd: false });
  const simd: boolean = pe.simd;
  const table: Float32Array = pe.encode(100, 50);
  const options: EncodeOptions = { preset: 'fairseq', paddingMask: [0, 0, 1], paddingIdx: 1 };
  pe.encode(3, 8, options);
  const names: PresetName[] = pe.presets.map((p) => p.name);

  const emb = new Float32Array(4 * 50);
  pe.addTo(emb, 50, { scale: Math.sqrt(50) });
  pe.concat(emb, 50, 16, { layout: 'split' });
  pe.shift(3, 50, { form: 'blocks' });

  const enc: Encoder = pe.encoder({ dim: 50, preset: 'vaswani' });
  const rows: Float32Array = enc.encode(3, { offset: 5 });
  enc.addTo(emb, { scale: 2 });
  enc.dispose();
  enc[Symbol.dispose]();

  // The other families of encodings are in the main entry too.
  const rot = pe.rotary({ headDim: 64, scaling: { type: 'linear', factor: 2 } });
  const q: Float32Array = rot.apply(new Float32Array(64), { heads: 1, offset: 3 });
  rot.dispose();
  const slopes: Float64Array = pe.alibiSlopes(8);
  const grid: Float32Array = pe.encode2d(4, 4, 16);

  // The declarations must be precise, not `any`: each of these is a compile error.
  // @ts-expect-error unknown option name
  pe.encode(1, 4, { ofset: 1 });
  // @ts-expect-error unknown preset
  pe.encode(1, 4, { preset: 'bert' });
  // @ts-expect-error layout is a closed union
  pe.encode(1, 4, { layout: 'columns' });
  // @ts-expect-error dim is required for an encoder
  pe.encoder({ preset: 'whisper' });
  // @ts-expect-error init options are { simd?: boolean, threads?: number }
  await init({ workers: 2 });
  // @ts-expect-error threads is a number
  await init({ threads: '2' });
  const threaded: Posenc = await init({ threads: 2 });
  const threads: number = threaded.threads;
  threaded.dispose();
  void threads;
  // @ts-expect-error results are Float32Array, not number[]
  const wrong: number[] = pe.encode(1, 4);

  return (simd ? 1 : 0) + table[250]! + rows[0]! + names.length + wrong.length + q[0]! + slopes[0]! + grid[0]!;
}
