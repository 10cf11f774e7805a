// Node: the decoder block of tests/fixtures/onnxruntime/ in onnxruntime-web (wasm backend, from
// node_modules) with posenc's RoPE caches, causal mask and ALiBi bias, in float32 and float16, a
// prompt of 8 tokens then a decoding step of 2 with the KV cache; prints the largest difference from
// PyTorch's float32 outputs.
//
//   node examples/onnxruntime/decoder-block.mjs
import { readFileSync } from 'node:fs';
import * as ort from 'onnxruntime-web';
import { init } from 'posenc'; // this repository's dist/ (the package refers to itself by name)
import { createSessions, runCases, summarize } from './decoder-block-core.mjs';

const fixtures = new URL('../../tests/fixtures/onnxruntime/', import.meta.url);
const read = (name) => readFileSync(new URL(name, fixtures));

ort.env.wasm.numThreads = 1;
const pe = await init();
const fixture = JSON.parse(read('decoder_block.json'));
const sessions = await createSessions(ort, {
  float32: read(fixture.files.float32),
  float16: read(fixture.files.float16),
});

const results = await runCases(ort, pe, sessions, fixture);
const e = (v) => v.toExponential(2);
console.log(`onnxruntime-web ${ort.env.versions.web} (wasm, 1 thread), posenc ${pe.simd ? 'SIMD' : 'baseline'} build`);
console.log(`${'case'.padEnd(13)} ${"posenc's inputs - PyTorch's".padEnd(34)} ${'float32 |diff|'.padStart(14)} ` +
  `${'float16 |diff|'.padStart(14)} ${'float16 bound'.padStart(13)} ${'|diff|/(bound+1e-5)'.padStart(19)}`);
for (const r of results) {
  const s = summarize(r);
  const inputs = `cos ${e(r.inputs.cos)} sin ${e(r.inputs.sin)} bias ${e(r.inputs.bias)}`;
  console.log(`${r.name.padEnd(13)} ${inputs.padEnd(34)} ${e(s.float32).padStart(14)} ${e(s.float16).padStart(14)} ` +
    `${e(s.float16Bound).padStart(13)} ${s.float16Ratio.toFixed(3).padStart(19)}`);
}
console.log('(|diff|: the largest over y, present_key and present_value; float16 bound: the largest of the per-value bounds)');
const y = results[1].float16;
console.log(`last float16 step: y ${y.type} [${y.dims.y}], present_key [${y.dims.presentKey}]`);
await sessions.float32.release();
await sessions.float16.release();
