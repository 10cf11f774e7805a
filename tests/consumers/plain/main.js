// The page a user would write: import posenc by name, compute, show the numbers. `?simd=0` forces
// the baseline build. tests/consumers/run.mjs reads #result once data-status is set.
import { init, simdSupported } from 'posenc';

async function main() {
  const forceBaseline = new URLSearchParams(location.search).get('simd') === '0';
  const pe = await init(forceBaseline ? { simd: false } : undefined);
  const table = pe.encode(100, 50);
  const enc = pe.encoder({ dim: 50 });
  const rows = enc.encode(3, { offset: 5 });
  enc.dispose();
  let afterDispose = null;
  try {
    enc.encode(1);
  } catch (err) {
    afterDispose = err.message;
  }
  enc.dispose(); // twice is harmless
  return {
    simd: pe.simd,
    simdSupported: simdSupported(),
    table: Array.from(table),
    encoderRows: Array.from(rows),
    afterDispose,
  };
}

const out = document.getElementById('result');
main().then(
  (result) => {
    document.getElementById('summary').textContent =
      `${result.simd ? 'SIMD' : 'baseline'} build: PE(5)[0] = ${result.table[250]}`;
    out.textContent = JSON.stringify(result);
    out.dataset.status = 'done';
  },
  (err) => {
    out.textContent = String(err?.stack ?? err);
    out.dataset.status = 'error';
  },
);
