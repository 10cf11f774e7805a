// Issue 26, the layer: posenc's encoder layer with N threads against onnxruntime-web with N threads
// (and posenc with one), same weights and input, medians of interleaved runs. onnxruntime-web fixes
// its thread count once per process (ort.env.wasm.numThreads), so bench/threads.mjs runs this file
// in a child process:
//   node bench/threads_layer.mjs [--threads N] [--quick] [--json FILE]
// Cases: d 512, 8 heads, ff 2048, L 512 (exported on first use from PyTorch's own
// nn.TransformerEncoderLayer into build/t-onnx/, like bench/layer.mjs's), long d 128, 4 heads,
// ff 512, L 2048 (bench/onnx/long-none.onnx), and tiny / small (bench/onnx), which must be no
// slower with N threads than with one.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { layerState, lcgValues } from '../tests/fixtures/layer/lcg.mjs';
import { timeAlternating } from './encode.mjs';
import { maxAbsDiff } from './layer.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const value = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const threads = Number(value('--threads') ?? 2);
const quick = args.includes('--quick');

// name, d, heads, ff, L, the ONNX file (seed 1 weights, post-norm ReLU, no mask)
const CASES = [
  ['d512 h8 ff2048 L512', 512, 8, 2048, 512, () => bigOnnx()],
  ['long d128 h4 ff512 L2048', 128, 4, 512, 2048, () => join(ROOT, 'bench/onnx/long-none.onnx')],
  ['small d256 h8 ff1024 L128', 256, 8, 1024, 128, () => join(ROOT, 'bench/onnx/small-none.onnx')],
  ['tiny d64 h4 ff256 L32', 64, 4, 256, 32, () => join(ROOT, 'bench/onnx/tiny-none.onnx')],
];

// PyTorch's nn.TransformerEncoderLayer(512, 8, 2048) with the LCG weights of seed 1, exported once.
function bigOnnx() {
  const file = join(ROOT, 'build', 't-onnx', 'big-post-relu.onnx');
  if (existsSync(file)) return file;
  const script = `
import os, sys, torch
sys.path.insert(0, ${JSON.stringify(join(ROOT, 'tests/fixtures/layer'))})
from gen_layer import build
from lcg import layer_input, layer_state
d, h, ff, L = 512, 8, 2048, 512
layer = build(d, h, ff, False, "relu", layer_state(1, d, ff), torch.float32)
x = torch.from_numpy(layer_input(1, L, d)).unsqueeze(0)
os.makedirs(os.path.dirname(${JSON.stringify(file)}), exist_ok=True)
with torch.enable_grad():
    torch.onnx.export(layer, (x,), ${JSON.stringify(file)}, input_names=["x"], output_names=["y"], opset_version=14, do_constant_folding=True)
`;
  execFileSync('/usr/bin/python3', ['-c', script], { stdio: 'ignore' });
  return file;
}

export async function benchThreadedLayer({ log = console.log } = {}) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  const { init } = await import('../dist/node.js');
  const one = await init({ threads: 1 });
  const many = await init({ threads });
  const rows = [];
  const timing = quick ? { budgetMs: 300, minRuns: 3, maxRuns: 20 } : { budgetMs: 1500, minRuns: 7, maxRuns: 200 };
  try {
    for (const [name, d, heads, ff, L, onnx] of CASES) {
      const x = lcgValues(1 * 100 + 99, L * d, 1); // layer_input(1, L, d)
      const weights = layerState(1, d, ff);
      const config = { dModel: d, heads, ffDim: ff };
      const l1 = one.encoderLayer({ config, weights });
      const lN = many.encoderLayer({ config, weights });
      const session = await ort.InferenceSession.create(readFileSync(onnx()), { executionProviders: ['wasm'] });
      const feeds = { x: new ort.Tensor('float32', x, [1, L, d]) };
      const ortOut = (await session.run(feeds)).y.data;
      const out1 = l1.forward(x);
      const outN = lN.forward(x);
      const same = outN.every((v, i) => Object.is(v, out1[i]));
      const ms = await timeAlternating([() => l1.forward(x), () => lN.forward(x), () => session.run(feeds)], timing);
      await session.release();
      l1.dispose();
      lN.dispose();
      const row = { case: name, threads, posenc1: ms[0], posencN: ms[1], ortN: ms[2], sameBits: same, errVsOrt: maxAbsDiff(outN, ortOut) };
      rows.push(row);
      log(`${name.padEnd(28)} posenc 1 thread ${ms[0].toFixed(2).padStart(8)} ms   posenc ${threads} threads ${ms[1].toFixed(2).padStart(8)} ms   onnxruntime-web ${threads} threads ${ms[2].toFixed(2).padStart(8)} ms   (${(ms[2] / ms[1]).toFixed(2)}x; same bits as 1 thread: ${same}; max |posenc - ORT| ${row.errVsOrt.toExponential(1)})`);
    }
  } finally {
    many.dispose();
  }
  return rows;
}

/** The targets of issue 26 for the layer rows. */
export function threadedLayerTargets(rows) {
  const targets = [];
  for (const r of rows) {
    if (r.case.startsWith('d512') || r.case.startsWith('long')) {
      targets.push({ target: `layer ${r.case}: posenc faster than onnxruntime-web, both ${r.threads} threads (ORT ms / posenc ms)`, value: r.ortN / r.posencN, ok: r.ortN > r.posencN });
    } else {
      targets.push({ target: `layer ${r.case}: ${r.threads} threads no slower than 1 (N-thread ms / 1-thread ms, 5% noise allowed)`, value: r.posencN / r.posenc1, ok: r.posencN <= 1.05 * r.posenc1 });
    }
    targets.push({ target: `layer ${r.case}: ${r.threads} threads give the same bits as 1`, value: r.sameBits ? 'same' : 'differ', ok: r.sameBits });
  }
  return targets;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const rows = await benchThreadedLayer();
  const file = value('--json');
  if (file) writeFileSync(file, JSON.stringify(rows));
  else for (const t of threadedLayerTargets(rows)) console.log(`${t.ok ? 'MET   ' : 'MISSED'} ${t.target} (${typeof t.value === 'number' ? t.value.toFixed(2) : t.value})`);
}
