// pe.attentionMask without a config (issue 25): the causal mask, with a sliding window or chunks,
// equal to what a model's config gives for a layer of that kind (Mistral's sliding window, Llama 4's
// chunked RoPE layers), and to the definition element by element.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadPackage } from './helpers.mjs';

const { init } = await loadPackage();
const pe = await init();

function reference(q, k, offset, window, chunk) {
  const m = new Uint8Array(q * k);
  for (let i = 0; i < q; i++) {
    const p = offset + i;
    for (let j = 0; j < k; j++) {
      const ok = j <= p && (window === 0 || j > p - window) && (chunk === 0 || Math.floor(j / chunk) === Math.floor(p / chunk));
      m[i * k + j] = ok ? 1 : 0;
    }
  }
  return m;
}

test('causal, sliding and chunked masks without a config equal their definition', () => {
  for (const [q, k, offset] of [[1, 1, 0], [5, 5, 0], [3, 10, 7], [1, 4097, 4096], [7, 12, 2]]) {
    for (const [window, chunk] of [[0, 0], [1, 0], [3, 0], [0, 4], [5, 3]]) {
      const options = { queryLength: q, keyLength: k, offset };
      if (window) options.slidingWindow = window;
      if (chunk) options.chunkSize = chunk;
      assert.deepEqual(pe.attentionMask(null, options), reference(q, k, offset, window, chunk), JSON.stringify(options));
    }
  }
  assert.deepEqual(pe.attentionMask(null, { queryLength: 3, offset: 2 }), reference(3, 5, 2, 0, 0));
});

test("the same as a model's config for its layer kind", () => {
  const mistral = { model_type: 'mistral', hidden_size: 64, num_attention_heads: 4, sliding_window: 6 };
  const llama4 = { model_type: 'llama4_text', hidden_size: 64, num_attention_heads: 4, attention_chunk_size: 4, no_rope_layers: [1, 0], num_hidden_layers: 2 };
  for (const [q, k, offset] of [[9, 9, 0], [2, 20, 18]]) {
    const options = { queryLength: q, keyLength: k, offset };
    assert.deepEqual(pe.attentionMask(null, { ...options, slidingWindow: 6 }), pe.attentionMask(mistral, options));
    assert.deepEqual(pe.attentionMask(null, { ...options, chunkSize: 4 }), pe.attentionMask(llama4, { ...options, layer: 0 }));
    assert.deepEqual(pe.attentionMask(null, options), pe.attentionMask(llama4, { ...options, layer: 1 }));
  }
});

test('bad input', () => {
  assert.throws(() => pe.attentionMask(null, { queryLength: 2, slidingWindow: 0 }), { name: 'RangeError', message: /slidingWindow must be an integer from 1/ });
  assert.throws(() => pe.attentionMask(null, { queryLength: 2, chunkSize: 1.5 }), { name: 'RangeError', message: /chunkSize must be an integer from 1/ });
  assert.throws(() => pe.attentionMask(null, { queryLength: 2, layer: 0 }), { name: 'TypeError', message: /layer needs a config/ });
  assert.throws(() => pe.attentionMask({ model_type: 'llama' }, { queryLength: 2, slidingWindow: 4 }), { name: 'TypeError', message: /slidingWindow comes from the config/ });
});
