// The tiny transformer through the package: the trained tagger loads from its .safetensors, matches
// PyTorch's logits, tags held-out sentences right with the positional encoding and no better
// than chance on who acts vs who is acted upon without it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fixtureDir, loadPackage, maxAbsDiff } from './helpers.mjs';

const { init } = await loadPackage();
const fixture = JSON.parse(readFileSync(join(fixtureDir, 'model', 'tagger.json'), 'utf8'));
const bytes = new Uint8Array(readFileSync(join(fixtureDir, 'model', 'tagger.safetensors')));

function argmaxRows(logits, classes) {
  const tags = [];
  for (let r = 0; r < logits.length / classes; r++) {
    let best = 0;
    for (let c = 1; c < classes; c++) if (logits[r * classes + c] > logits[r * classes + best]) best = c;
    tags.push(best);
  }
  return tags;
}

for (const simd of [true, false]) {
  test(`tagger model (${simd ? 'SIMD' : 'baseline'}): PyTorch parity and accuracy with and without PE`, async () => {
    const pe = await init({ simd });
    const model = pe.loadModel(bytes);
    try {
      const classes = fixture.labels.length;
      let agentPatient = 0;
      let rightWith = 0;
      let rightWithout = 0;
      for (const c of fixture.cases) {
        const withPE = model.forward(c.tokens, { pe: true });
        const withoutPE = model.forward(c.tokens, { pe: false });
        assert.ok(maxAbsDiff(withPE, c.logitsWithPE) <= 1e-5, 'logits with PE vs PyTorch');
        const a = argmaxRows(withPE, classes);
        const b = argmaxRows(withoutPE, classes);
        c.tags.forEach((t, i) => {
          if (t === 0) return; // who acts (1) and who is acted upon (2) only
          agentPatient++;
          if (a[i] === t) rightWith++;
          if (b[i] === t) rightWithout++;
        });
      }
      const accWith = rightWith / agentPatient;
      const accWithout = rightWithout / agentPatient;
      assert.ok(accWith >= 0.95, `accuracy with PE ${accWith}`);
      assert.ok(accWithout <= 0.6, `accuracy without PE ${accWithout}`);
    } finally {
      model.dispose();
    }
    assert.throws(() => model.forward([1, 2]), /dispos/);
    model.dispose();
    assert.throws(() => pe.loadModel(bytes.subarray(0, 20)), RangeError);
    assert.equal(pe.loadModel(bytes).labels.length, fixture.labels.length); // still works after an error
  });
}
