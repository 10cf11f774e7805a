// Test double for the transformer section's UI while the real pe.loadModel (issue 5) is not in the
// package: the real posenc, plus a loadModel() that follows the agreed contract and tags by a
// fixed rule (nouns before the verb act, nouns after it are acted upon; without PE every noun gets
// the same tag, as a bag-of-words model would). Only the e2e mock build uses it.
import { init as realInit, simdSupported } from '../../../dist/browser.js';

export { simdSupported };

function header(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
}

export async function init(options) {
  const pe = await realInit(options);
  pe.loadModel = (bytes) => {
    if (!(bytes instanceof Uint8Array)) throw new TypeError('loadModel: bytes must be a Uint8Array');
    const meta = header(bytes).__metadata__;
    const vocab = meta.vocab.trim().startsWith('[') ? JSON.parse(meta.vocab) : meta.vocab.split(/\s+/);
    const nouns = new Set(['dog', 'man', 'cat', 'woman']);
    const verbs = new Set(['bit', 'saw', 'chased']);
    let last = null;
    return {
      forward(ids, { pe: usePe }) {
        const words = Array.from(ids, (id) => vocab[id]);
        const verb = words.findIndex((w) => verbs.has(w));
        const logits = new Float32Array(ids.length * 3);
        words.forEach((w, i) => {
          const tag = !nouns.has(w) ? 2 : !usePe ? 0 : verb >= 0 && i > verb ? 1 : 0;
          logits[i * 3 + tag] = 1;
        });
        const L = ids.length;
        last = new Float32Array(2 * L * L);
        for (let q = 0; q < L; q++) {
          last[q * L + Math.max(q - 1, 0)] = 1; // head 1: the previous token
          for (let k = 0; k < L; k++) last[L * L + q * L + k] = 1 / L; // head 2: uniform
        }
        return logits;
      },
      attention() {
        return last.slice();
      },
      dispose() {},
    };
  };
  return pe;
}
