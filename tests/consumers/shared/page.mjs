// The page a user would write: import posenc by name, compute, show the numbers. `?simd=0` forces
// the baseline build. The Vite, webpack and plain-page consumers all load this file;
// tests/consumers/run.mjs reads #result once data-status is set.
import * as posenc from 'posenc';
import { exercise } from './exercise.mjs';

const forceBaseline = new URLSearchParams(location.search).get('simd') === '0';
const out = document.getElementById('result');
exercise(posenc, forceBaseline ? { simd: false } : undefined).then(
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
