// The page's module (index.html): the same code as decoder-block.mjs and rope-index.mjs, in the
// browser. 'onnxruntime-web', 'posenc' and 'posenc/multimodal' come from index.html's import map
// (the repository's node_modules/ and dist/, served from the repository root); with a bundler the
// same bare imports resolve from node_modules.
import * as ort from 'onnxruntime-web';
import { init } from 'posenc';
import { ropeIndex } from 'posenc/multimodal';
import { createSessions, maxAbsDiff, runCases, summarize } from './decoder-block-core.mjs';
import { runRopeIndex } from './rope-index-core.mjs';

const fixtures = new URL('../../tests/fixtures/onnxruntime/', import.meta.url);
const bytes = async (name) => new Uint8Array(await (await fetch(new URL(name, fixtures))).arrayBuffer());
const json = async (name) => (await fetch(new URL(name, fixtures))).json();

/** Runs both examples; returns plain numbers (structured-clone safe) for the page and the test. */
export async function runExamples() {
  ort.env.wasm.numThreads = 1; // threads need a cross-origin-isolated page
  const pe = await init();
  const fixture = await json('decoder_block.json');
  const sessions = await createSessions(ort, {
    float32: await bytes(fixture.files.float32),
    float16: await bytes(fixture.files.float16),
  });
  const results = await runCases(ort, pe, sessions, fixture);
  await sessions.float32.release();
  await sessions.float16.release();

  const mrope = await json('mrope_qwen2vl.json');
  const session = await ort.InferenceSession.create(await bytes('mrope_qwen2vl.onnx'), { executionProviders: ['wasm'] });
  const r = await runRopeIndex(ort, ropeIndex, pe, session, mrope);
  await session.release();
  return {
    ort: ort.env.versions.web,
    simd: pe.simd,
    float16Array: typeof globalThis.Float16Array === 'function',
    decoder: results.map((x) => ({
      ...summarize(x),
      outputType: x.float16.type,
      y32: Array.from(x.float32.y),
      y16: Array.from(x.float16.y),
    })),
    ropeIndex: {
      positionIds: { type: r.positionIds.type, dims: r.positionIds.dims, copied: r.positionIds.copied },
      positions: Array.from(r.positionIds.data, Number),
      ropeDeltas: Array.from(r.ropeDeltas.data, Number),
      cosVsPyTorch: maxAbsDiff(r.cos.data, mrope.expected.cos),
      sinVsPyTorch: maxAbsDiff(r.sin.data, mrope.expected.sin),
      cosVsPosenc: maxAbsDiff(r.cos.data, r.posenc.cos),
      sinVsPosenc: maxAbsDiff(r.sin.data, r.posenc.sin),
    },
  };
}
