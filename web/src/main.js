// The posenc demo page: loads posenc (every family of encodings and the transformer), the SIMD
// build where supported, and sets up each section. Every number shown is computed by posenc in
// this page.
//
// First load (issue 25; tests/e2e/first-load.test.mjs measures it): no start-up task runs long
// enough to freeze the page. The wasm is fetched and compiled after the first frame. Each section
// is a chunk of its own (a dynamic import), evaluated when it arrives, and is set up in a task of
// its own, the main thread handed back to the browser in between (a performance.measure "setup
// <name>" each, shown in DevTools); sections whose first draw is heavy split it further. Section
// 11 (five models, about 610 KB, and its accuracies) starts when it comes near the viewport.
import { init } from 'posenc';
import './style.css';
import { comparedThreads, threadsAvailable } from './lib/threads.js';
import { nearViewport, yieldToBrowser } from './lib/util.js';

/** [name, module, setup, the section made data-ready when it is done (null: none)], page order. */
const SECTIONS = [
  ['waves', () => import('./sections/waves.js'), (m, pe) => m.setupWaves(pe)],
  ['matrix', () => import('./sections/matrix.js'), (m, pe) => m.setupMatrix(pe)],
  ['example', () => import('./sections/example.js'), (m, pe) => m.setupExample(pe)],
  ['distance', () => import('./sections/distance.js'), (m, pe) => m.setupDistance(pe)],
  ['transformer', () => import('./sections/transformer.js'), (m, pe) => m.setupTransformer(pe)],
  ['speed', () => import('./sections/speed.js'), (m, pe) => m.setupSpeed(pe)],
  ['rotary', () => import('./sections/rotary.js'), (m, pe) => m.setupRotary(pe)],
  // section 8 is ready when both its parts are
  ['rope-scaling', () => import('./sections/rotary.js'), (m, pe) => m.setupRopeScaling(pe), null],
  ['rope-half', () => import('./sections/rotary-half.js'), (m, pe) => m.setupRotaryHalf(pe), null],
  ['rope-layers', () => import('./sections/rope-layers.js'), (m, pe) => m.setupRopeLayers(pe), 'rope-scaling'],
  ['alibi', () => import('./sections/alibi.js'), (m, pe) => m.setupAlibi(pe)],
  ['sincos2d', () => import('./sections/sincos2d.js'), (m, pe) => m.setupSincos2d(pe)],
  ['mrope', () => import('./sections/mrope.js'), (m, pe) => m.setupMrope(pe)],
  ['relative', () => import('./sections/relative.js'), (m, pe) => m.setupRelative(pe)],
  ['rotary2d', () => import('./sections/rotary2d.js'), (m, pe) => m.setupRotary2d(pe)],
];

/** Sets up one part in tasks of its own once its module is there, measured as "setup <name>";
 * then marks section `ready` data-ready. */
async function setUp(name, module, setup, ready, pe) {
  const m = await module;
  await yieldToBrowser();
  performance.mark(`setup ${name}`);
  try {
    await setup(m, pe);
  } catch (err) {
    showFatal(`${name}: ${err instanceof Error ? err.message : err}`);
    throw err;
  } finally {
    performance.measure(`setup ${name}`, `setup ${name}`);
  }
  if (ready) document.getElementById(ready).dataset.ready = 'true';
}

async function main() {
  // after the first frame (or 100 ms, in a background tab): the page's first layout does not share
  // the CPU with the wasm compile
  await new Promise((resolve) => {
    requestAnimationFrame(() => setTimeout(resolve, 0));
    setTimeout(resolve, 100);
  });
  const instance = init(); // fetches and compiles the wasm meanwhile
  // then every section's module at once; each is evaluated when it arrives
  await yieldToBrowser();
  const modules = SECTIONS.map(([, load]) => load());
  for (const m of modules) m.catch(() => {}); // reported by setUp when awaited
  const pe = await instance;
  showBuildInfo(pe);
  // Section 11 starts when it comes near the viewport (its models and accuracies: extrapolation.js).
  nearViewport(document.getElementById('extrapolation'), () => {
    setUp('extrapolation', import('./sections/extrapolation.js'), (m) => m.setupExtrapolation(pe), 'extrapolation')
      .catch((err) => console.error(err));
  });
  for (let i = 0; i < SECTIONS.length; i++) {
    const [name, , setup, ready = name] = SECTIONS[i];
    await setUp(name, modules[i], setup, ready, pe);
  }
  document.body.dataset.ready = 'true';
}

/** The header's "which build runs, on how many threads". The page's instance runs on one thread
 * (the threaded build is loaded by section 6's comparison only); whether threads can run here
 * depends on cross-origin isolation (web/isolation.js). */
function showBuildInfo(pe) {
  const info = document.getElementById('build-info');
  const available = threadsAvailable(pe.simd);
  const build = pe.simd ? 'wasm SIMD build' : 'wasm baseline build (no SIMD here)';
  const why = available
    ? `cross-origin isolated, so section 6 also runs it on ${comparedThreads()} threads`
    : globalThis.crossOriginIsolated === true
      ? 'threads unavailable here (section 6 says why)'
      : 'not cross-origin isolated, so no threads here';
  info.textContent = `${build}, ${pe.threads} thread${pe.threads === 1 ? '' : 's'}; ${why}`;
  Object.assign(info.dataset, {
    simd: String(pe.simd),
    threads: String(pe.threads),
    isolated: String(globalThis.crossOriginIsolated === true),
    threadsAvailable: available ? String(comparedThreads()) : '1',
  });
}

function showFatal(message) {
  const el = document.getElementById('fatal');
  el.hidden = false;
  el.textContent = `The demo could not start: ${message}`;
}

main().catch((err) => {
  showFatal(err instanceof Error ? err.message : String(err));
  console.error(err);
});
