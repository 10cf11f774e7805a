// The posenc demo page: loads posenc once (the SIMD build where supported) and sets up each
// section. Every number shown is computed by posenc in this page.
import { init } from 'posenc';
import './style.css';
import { setupWaves } from './sections/waves.js';
import { setupMatrix } from './sections/matrix.js';
import { setupExample } from './sections/example.js';
import { setupDistance } from './sections/distance.js';
import { setupTransformer } from './sections/transformer.js';
import { setupSpeed } from './sections/speed.js';
import { setupRotary, setupRopeScaling } from './sections/rotary.js';
import { setupAlibi } from './sections/alibi.js';
import { setupSincos2d } from './sections/sincos2d.js';

async function main() {
  const pe = await init();
  document.getElementById('build-info').textContent = pe.simd ? 'wasm SIMD build' : 'wasm baseline build (no SIMD here)';
  // Until posenc's own rotary / ALiBi / 2D API is merged, a plain-JS stand-in of the same API
  // (dev-shim.js, deleted when the real one lands) lets sections 7 to 10 run.
  if (typeof pe.rotary !== 'function') {
    (await import('./dev-shim.js')).installDevShim(pe);
    document.body.dataset.devShim = 'true';
  }
  const sections = {
    waves: setupWaves,
    matrix: setupMatrix,
    example: setupExample,
    distance: setupDistance,
    rotary: setupRotary,
    'rope-scaling': setupRopeScaling,
    alibi: setupAlibi,
    sincos2d: setupSincos2d,
  };
  for (const [id, setup] of Object.entries(sections)) {
    try {
      setup(pe);
      document.getElementById(id).dataset.ready = 'true';
    } catch (err) {
      showFatal(`${id}: ${err instanceof Error ? err.message : err}`);
      throw err;
    }
  }
  setupSpeed();
  document.getElementById('speed').dataset.ready = 'true';
  await setupTransformer(pe);
  document.getElementById('transformer').dataset.ready = 'true';
  document.body.dataset.ready = 'true';
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
