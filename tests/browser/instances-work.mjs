// The work each posenc instance does in tests/browser/instances.test.mjs: the same function runs
// in Node (the reference), on the page's main thread and in module Web Workers, so their results
// can be compared bit for bit. A plain ES module: no Node or DOM imports.
import { layerInput, layerState } from '../fixtures/layer/lcg.mjs';

/** Fixture tiny-post-relu (tests/fixtures/layer): PyTorch's output for these weights and input. */
export const LAYER_FIXTURE = Object.freeze({ name: 'tiny-post-relu', seed: 1, length: 32, dModel: 64, heads: 4, ffDim: 256 });

export function makeLayer(pe) {
  const { seed, dModel, heads, ffDim } = LAYER_FIXTURE;
  return pe.encoderLayer({ config: { dModel, heads, ffDim }, weights: layerState(seed, dModel, ffDim) });
}

export const layerX = (length = LAYER_FIXTURE.length) => layerInput(LAYER_FIXTURE.seed, length, LAYER_FIXTURE.dModel);

/**
 * An encode, an encoder (fairseq) used twice, an encoder-layer forward with its attention and a
 * model forward, each object disposed after use. Returns the Float32Arrays by name.
 */
export function compute(pe, modelBytes, tokens) {
  const table = pe.encode(64, 64, { offset: 1000 });
  const enc = pe.encoder({ dim: 48, preset: 'fairseq' });
  const rows = enc.encode(16, { offset: 3 });
  const embeddings = new Float32Array(8 * 48).fill(0.5);
  enc.addTo(embeddings, { scale: 2, paddingMask: [0, 0, 1, 0, 0, 0, 1, 1] });
  enc.dispose();
  const layer = makeLayer(pe);
  const forward = layer.forward(layerX());
  const attention = layer.attention();
  layer.dispose();
  const model = pe.loadModel(modelBytes);
  const logits = model.forward(tokens);
  const modelAttention = model.attention();
  model.dispose();
  return { table, rows, embeddings, forward, attention, logits, modelAttention };
}

/** Float32Arrays as arrays of their bit patterns (exact, and structured-clone/JSON safe). */
export function toBits(results) {
  const out = {};
  for (const [name, value] of Object.entries(results)) {
    out[name] = Array.from(new Uint32Array(value.buffer, value.byteOffset, value.length));
  }
  return out;
}
