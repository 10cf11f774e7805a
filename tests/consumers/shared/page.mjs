// The page a user would write: import posenc by name, compute, show the numbers. `?simd=0` forces
// the baseline build. `?threads=2` asks for init({ threads: 2 }) and, where that is refused (a page
// that is not cross-origin isolated), falls back to one thread, as docs/API.md ("Threads") advises;
// the result then also says whether the page was isolated, what was refused, pe.threads and the
// digests of big tables. The Vite, webpack and plain-page consumers all load this file;
// tests/consumers/run.mjs reads #result once data-status is set.
import * as posenc from 'posenc';
import { exercise } from './exercise.mjs';

const params = new URLSearchParams(location.search);
const forceBaseline = params.get('simd') === '0';
const threads = Number(params.get('threads') ?? 1);
const out = document.getElementById('result');

async function run() {
  if (threads === 1) return exercise(posenc, forceBaseline ? { simd: false } : undefined);
  let refused = null;
  let result;
  try {
    result = await exercise(posenc, { threads }, { big: true });
  } catch (err) {
    refused = { name: err?.name, message: err?.message };
    result = await exercise(posenc, undefined, { big: true });
  }
  return { ...result, crossOriginIsolated: globalThis.crossOriginIsolated, refused };
}

run().then(
  (result) => {
    document.getElementById('summary').textContent =
      `${result.simd ? 'SIMD' : 'baseline'} build, ${result.threads ?? 1} thread(s): PE(5)[0] = ${result.table[250]}`;
    out.textContent = JSON.stringify(result);
    out.dataset.status = 'done';
  },
  (err) => {
    out.textContent = String(err?.stack ?? err);
    out.dataset.status = 'error';
  },
);
