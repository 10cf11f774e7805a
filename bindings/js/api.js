// createApi: the public API of one instance, composed from one module per concern. Data flows
// one way: options -> checks (check.js) -> spec and rows (spec.js, rows.js) -> chunked calls into
// the core through the scratch region (transfer.js, memory.js) -> JS-owned results. Nothing
// returned to the caller is a view of wasm memory.
//
// Each family of functions attaches itself to the api object from the same context (the entries,
// node.js / browser.js and encoding-node.js / encoding-browser.js, say which families):
//   ctx = { Module, core, scratch, copyOut, withBuffers }
// Module: the instantiated Emscripten module (_malloc, _free, HEAP views); core: what the core
// hands over (core.js: limits, enum names, presets, layer tensors, newEncoder/newLayer/newModel);
// scratch/copyOut/withBuffers: the instance's memory helpers (memory.js). Objects owning wasm
// memory get their lifetime from lifetime.js; argument checks come from check.js.

import { rangeError, typeError } from './check.js';
import { readCore } from './core.js';
import { createScratch } from './memory.js';

/** The shared context every family of functions receives. */
export function createContext(Module) {
  const memory = createScratch(Module);
  return { Module, core: readCore(Module), ...memory, guardMethods: createGuard(memory.trimScratch) };
}

/**
 * guardMethods(object, prefix): wraps each own method of `object` (Symbol.dispose too) so that a
 * call made while another call of the same instance is running throws an Error. The caller's code
 * can run inside a call (an options getter, an Array's index getter, a config's toJSON); a call
 * into posenc from there would reuse the scratch region and the cached encoders the outer call is
 * working with, or dispose them under it. After each call, afterCall() runs (memory.js: a scratch
 * region grown past its usual size by that call is given back). Returns object.
 */
function createGuard(afterCall) {
  let busy = false;
  return function guardMethods(object, prefix) {
    for (const key of Reflect.ownKeys(object)) {
      const desc = Object.getOwnPropertyDescriptor(object, key);
      const f = desc.value;
      if (typeof f !== 'function') continue;
      const name = `${prefix}${typeof key === 'symbol' ? 'dispose' : key}`;
      // Four parameters: the most any function of the API takes (no rest array per call; no
      // function reads `this` or `arguments`, and a missing argument is undefined either way).
      desc.value = function guarded(a, b, c, d) {
        if (busy) {
          throw new Error(`posenc.${name}: called while another call of this posenc instance is running (from a getter, an index getter or toJSON of its arguments); call it after that call returns`);
        }
        busy = true;
        try {
          return f(a, b, c, d);
        } finally {
          busy = false;
          afterCall();
        }
      };
      Object.defineProperty(object, key, desc);
    }
    return object;
  };
}

/**
 * The API of one instantiated module: { simd } (and a hidden _module) and what each family in `families`
 * attaches, e.g. [attachEncoderApi, attachLayerApi, attachModelApi] (the entry decides which, so
 * an entry without the transformer loads none of its JavaScript).
 */
export function createApi(Module, { simd, threads = 1, families }) {
  const ctx = createContext(Module);
  // dispose(): stops the threaded build's workers (a process exits without it: they do not hold it);
  // `threads` then says 1, what runs.
  const api = {
    simd,
    get threads() {
      return threads;
    },
    dispose: () => threads > 1 && (Module.posencStop(), (threads = 1)),
  };
  // The Emscripten module, for the tests (heap size, bound classes): not part of the API.
  Object.defineProperty(api, '_module', { value: Module });
  for (const attach of families) attach(api, ctx);
  return ctx.guardMethods(api, '');
}

/**
 * The init() of an entry: load(simd, threads) instantiates the chosen Emscripten module (the entry
 * holds the literal file names bundlers look for); families as for createApi. cores(): the cores
 * this runtime lets threads use, for threads: 'auto' (each entry asks its own runtime: node:os stays
 * out of the browser entries).
 */
export function createInit(load, families, cores) {
  return async function init(options) {
    const simd = chooseBuild(options);
    const threads = chooseThreads(options, simd, cores);
    const Module = await load(simd, threads);
    // The threaded build started threads - 1 workers with the module: the core's pool runs on them.
    if (threads > 1) Module.setThreads(threads);
    return createApi(Module, { simd, threads, families });
  };
}

// The wasm SIMD probe (the same module wasm-feature-detect validates: i32.const 0; i8x16.splat;
// i8x16.popcnt would be newer, this uses v128 ops every SIMD engine has).
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11,
]);

export function simdSupported() {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(SIMD_PROBE);
  } catch {
    return false;
  }
}

/** Validates init() options and decides which build to load. */
export function chooseBuild(options) {
  if (options === undefined) options = {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw typeError('init', 'options', 'an object', options);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'simd' && key !== 'threads') throw new TypeError(`posenc.init: unknown option '${key}' (allowed: simd, threads)`);
  }
  if (options.simd !== undefined && typeof options.simd !== 'boolean') {
    throw typeError('init', 'simd', 'a boolean', options.simd);
  }
  const supported = simdSupported();
  if (options.simd === true && !supported) {
    throw new Error('posenc.init: simd: true was asked for, but this engine does not support wasm SIMD');
  }
  return options.simd === undefined ? supported : options.simd;
}

const THREADS = "an integer from 1 to 16 or 'auto'";

/**
 * Validates init()'s `threads` (every thread, the caller's included, as onnxruntime-web counts)
 * and returns how many to run: 1 unless asked for. 'auto' (issue 26's rule): min(4, cores()) where
 * the threaded build can run (the SIMD build and SharedArrayBuffer; cores() is 1 on a page that is
 * not cross-origin isolated), else 1 without an error; a missing or invalid count (cores() | 0 < 1)
 * counts as 1.
 */
function chooseThreads(options, simd, cores) {
  const threads = options?.threads;
  if (threads === undefined || threads === 1) return 1;
  if (threads === 'auto') return simd && typeof SharedArrayBuffer === 'function' ? Math.min(4, Math.max(1, cores() | 0)) : 1;
  if (typeof threads !== 'number') throw typeError('init', 'threads', THREADS, threads);
  if (!Number.isInteger(threads) || threads < 1 || threads > 16) {
    throw rangeError('init', 'threads', THREADS, threads);
  }
  if (!simd) throw new RangeError('posenc.init: threads > 1 runs the SIMD build only, not simd: false');
  if (typeof SharedArrayBuffer !== 'function' || globalThis.crossOriginIsolated === false) {
    throw new Error('posenc.init: threads > 1 needs SharedArrayBuffer: Node, or a cross-origin isolated page (docs/API.md, "Threads")');
  }
  return threads;
}

/**
 * The browser entries' cores for threads: 'auto': navigator.hardwareConcurrency on a cross-origin
 * isolated page or worker, else 1 (no SharedArrayBuffer to share). The Node entries pass os's count.
 */
export const browserCores = () => (globalThis.crossOriginIsolated === true ? navigator.hardwareConcurrency : 1);
