// Node: ropeIndex (posenc/multimodal) gives a Qwen2-VL batch's position ids as a tensor
// { data, dims, type } that becomes an ort.Tensor without a copy and feeds an ONNX graph whose
// input is position_ids int64 [3, batch, seq] (tests/fixtures/onnxruntime/mrope_qwen2vl.onnx: the
// model's rotary embedding). Prints the dims and types on the way, and how far the graph's cos /
// sin are from PyTorch's and from posenc's multimodal cosSin.
//
//   node examples/onnxruntime/rope-index.mjs
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-web';
import { init } from 'posenc';
import { ropeIndex } from 'posenc/multimodal';
import { maxAbsDiff } from './decoder-block-core.mjs';
import { runRopeIndex } from './rope-index-core.mjs';

const fixtures = new URL('../../tests/fixtures/onnxruntime/', import.meta.url);
ort.env.wasm.numThreads = 1;
const pe = await init();
const fixture = JSON.parse(readFileSync(new URL('mrope_qwen2vl.json', fixtures), 'utf8'));
const session = await ort.InferenceSession.create(readFileSync(new URL('mrope_qwen2vl.onnx', fixtures)), {
  executionProviders: ['wasm'],
});

const r = await runRopeIndex(ort, ropeIndex, pe, session, fixture);
const dims = (t) => `${t.type} [${t.dims.join(', ')}]`;
for (const m of r.graphInputs ?? []) console.log(`graph input ${m.name}: ${m.type} [${m.shape.join(', ')}]`);
console.log(`input_ids ${dims(r.inputIds)}, attention_mask the same, image_grid_thw ${JSON.stringify(fixture.imageGridThw)}`);
console.log(`ropeIndex -> position_ids ${dims(r.positionIds)} (${r.positionIds.data.constructor.name}, ` +
  `${r.positionIds.copied ? 'copied' : 'not copied: the ort.Tensor holds ropeIndex\'s array'}), ` +
  `rope_deltas ${dims(r.ropeDeltas)} = ${Array.from(r.ropeDeltas.data).join(', ')}`);
const [, batch, length] = r.positionIds.dims;
for (let b = 0; b < batch; b++) {
  for (const [axis, name] of ['t', 'h', 'w'].entries()) {
    const row = Array.from(r.positionIds.data.subarray((axis * batch + b) * length, (axis * batch + b + 1) * length));
    console.log(`  sequence ${b} ${name}: ${row.join(' ')}`);
  }
}
console.log(`graph -> cos ${dims(r.cos)}, sin ${dims(r.sin)}`);
const same = r.positionIds.data.every((v, i) => Number(v) === fixture.expected.positionIds[i]);
console.log(`position ids = HF get_rope_index's (PyTorch port): ${same}`);
const e = (v) => v.toExponential(2);
console.log(`max |graph - PyTorch|: cos ${e(maxAbsDiff(r.cos.data, fixture.expected.cos))}, sin ${e(maxAbsDiff(r.sin.data, fixture.expected.sin))}`);
console.log(`max |graph - posenc cosSin|: cos ${e(maxAbsDiff(r.cos.data, r.posenc.cos))}, sin ${e(maxAbsDiff(r.sin.data, r.posenc.sin))} ` +
  '(the graph forms angles in float32, as HF; posenc in float64)');
await session.release();
