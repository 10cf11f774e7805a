// The posenc demo page: loads posenc (every family of encodings and the transformer), the SIMD
// build where supported, and sets up each section. Every number shown is computed by posenc in
// this page.
import { init } from 'posenc';
import './style.css';
import { setupWaves } from './sections/waves.js';
import { setupMatrix } from './sections/matrix.js';
import { setupExample } from './sections/example.js';
import { setupDistance } from './sections/distance.js';
import { setupTransformer } from './sections/transformer.js';
import { setupSpeed } from './sections/speed.js';
import { setupExtrapolation } from './sections/extrapolation.js';
import { setupRotary, setupRopeScaling } from './sections/rotary.js';
import { setupAlibi } from './sections/alibi.js';
import { setupSincos2d } from './sections/sincos2d.js';
import { setupRopeLayers } from './sections/rope-layers.js';
import { setupMrope } from './sections/mrope.js';
import { setupRelative } from './sections/relative.js';
import { setupRotary2d } from './sections/rotary2d.js';

async function main() {
  const pe = await init();
  document.getElementById('build-info').textContent = pe.simd ? 'wasm SIMD build' : 'wasm baseline build (no SIMD here)';
  const sections = {
    waves: [setupWaves, pe],
    matrix: [setupMatrix, pe],
    example: [setupExample, pe],
    distance: [setupDistance, pe],
    rotary: [setupRotary, pe],
    'rope-scaling': [(p) => { setupRopeScaling(p); setupRopeLayers(p); }, pe],
    alibi: [setupAlibi, pe],
    sincos2d: [setupSincos2d, pe],
    mrope: [setupMrope, pe],
    relative: [setupRelative, pe],
    rotary2d: [setupRotary2d, pe],
  };
  for (const [id, [setup, instance]] of Object.entries(sections)) {
    try {
      setup(instance);
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
  await setupExtrapolation(pe);
  document.getElementById('extrapolation').dataset.ready = 'true';
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
