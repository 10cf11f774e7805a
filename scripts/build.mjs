// `npm run build`: compiles the C++ core and bindings to wasm (SIMD and baseline) with
// Emscripten through CMake, then assembles dist/ (glue, .wasm, JS API, types).
//
// The JavaScript that ships is small: each entry (node.js, browser.js, encoding-node.js,
// encoding-browser.js) is bundled by rolldown with the API modules of bindings/js/ it imports into
// one self-contained ES module, then minified by terser, as is each Emscripten glue; a source map
// (sources included) sits next to each file. One file per entry gzips 4-5 KB smaller than the
// same modules gzipped one by one and spares the browser a request per module (docs/API.md,
// "Bundlers"; tests/js/size.test.mjs), while bindings/js/ stays the readable source. The glue
// stays a separate file, loaded by the literal `import('./posenc_simd.mjs')` and pointed at its
// .wasm by the literal `new URL('./posenc_simd.wasm', import.meta.url)`: bundlers (Vite, webpack)
// need those literal forms to find and emit the files, and only the build init() picks is loaded.
// In the API bundles only local names are mangled: exported names, property names, function names
// (keep_fnames) and every error message are unchanged. The glue goes through Closure Compiler
// (emcc --closure 1) and then terser with stronger options (GLUE_TERSER_OPTIONS).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';
import { minify } from 'terser';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const build = join(root, 'build', 'wasm-release');
const dist = join(root, 'dist');
// Closure Compiler for emcc's --closure 1 over the glue (cmake/wasm_module.cmake, POSENC_WASM_CLOSURE):
// the npm devDependency's launcher (its native Linux binary, else its Java jar), unless
// EM_CLOSURE_COMPILER names another.
const closureCompiler = process.env.EM_CLOSURE_COMPILER || join(root, 'node_modules', '.bin', 'google-closure-compiler');
if (!existsSync(closureCompiler)) {
  throw new Error(`${closureCompiler} is missing: run \`npm ci\` (the devDependency google-closure-compiler)`);
}
// Debian's emcc needs NODE_PATH to find acorn (see the README's build notes).
const env = { ...process.env, NODE_PATH: process.env.NODE_PATH || '/usr/share/nodejs', EM_CLOSURE_COMPILER: closureCompiler };
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, env, stdio: 'inherit' });

run('emcmake', ['cmake', '-S', '.', '-B', build, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release', '-DPOSENC_BUILD_TESTS=OFF', '-DPOSENC_WASM_CLOSURE=ON']);
// The main entry's modules (every binding) and posenc/encoding's (no transformer).
// The threaded builds (SIMD + pthreads, init({ threads }) > 1) add a worker script each.
const threaded = ['posenc_threads', 'posenc_encoding_threads'];
const modules = ['posenc_simd', 'posenc_baseline', 'posenc_encoding_simd', 'posenc_encoding_baseline', ...threaded];
const targets = ['posenc_simd', 'posenc_baseline_module', 'posenc_encoding_simd', 'posenc_encoding_baseline_module', ...threaded];
run('cmake', ['--build', build, '--target', ...targets]);

// The API bundles: names are mangled, except the attach* function of each family (the size test
// finds each family's code by it). Stack traces map back through the shipped .map files. Mangling
// function names too took 300 B gzipped off the main entry (0.3.0).
const KEEP = /^attach/;
const API_TERSER_OPTIONS = { module: true, ecma: 2020, compress: { passes: 2 }, mangle: { keep_fnames: KEEP }, keep_fnames: KEEP };
// The glue (already through Closure): generated code no user reads, whose function names nothing
// uses (embind names its classes from strings). Three passes and the `unsafe` transforms
// Emscripten's own minifiers also make (methods and arrows for function expressions that use no
// `this`, property reads without side effects) take 1.1 KB gzipped off a glue without Closure and
// 160 B off one after it; unsafe_math and unsafe_comps are left out (5 B).
const GLUE_TERSER_OPTIONS = {
  module: true,
  ecma: 2020,
  compress: { passes: 3, pure_getters: true, unsafe: true, unsafe_arrows: true, unsafe_methods: true },
  mangle: true,
  keep_fnames: false,
};

/**
 * Writes `code` minified as dist/name plus dist/name.map. `sources` names the input for the map
 * (relative to dist/); `inputMap`, when the code is itself generated (a bundle), maps it further back.
 */
async function writeMinified(code, name, { sources, inputMap, options }) {
  const result = await minify(inputMap ? { [name]: code } : { [sources]: code }, {
    ...options,
    sourceMap: { filename: name, url: `${name}.map`, includeSources: true, ...(inputMap && { content: inputMap }) },
  });
  writeFileSync(join(dist, name), `${result.code}\n`);
  writeFileSync(join(dist, `${name}.map`), result.map);
}

/**
 * Bundles the entry bindings/js/name with the modules it imports into one ES module. The glue
 * (`./*.mjs`, a dynamic import) and Node's built-ins stay imports; `new URL(..., import.meta.url)`
 * is left as written.
 */
async function bundleEntry(name) {
  const bundle = await rolldown({
    input: join(jsDir, name),
    external: [/\.mjs$/, /^node:/],
    treeshake: true,
    logLevel: 'warn',
  });
  // dir: the map names the modules relative to dist/, where it ships (../bindings/js/api.js).
  const { output } = await bundle.generate({ dir: dist, format: 'es', sourcemap: true });
  await bundle.close();
  const chunks = output.filter((o) => o.type === 'chunk');
  if (chunks.length !== 1) throw new Error(`bundling ${name} gave ${chunks.map((o) => o.fileName).join(', ')}, not one module`);
  const [chunk] = chunks;
  return { code: chunk.code.replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'), map: JSON.parse(chunk.map.toString()) };
}

const jsDir = join(root, 'bindings', 'js');
const entries = ['node.js', 'browser.js', 'encoding-node.js', 'encoding-browser.js'];

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
/** `code` with `from` (which must occur exactly once) replaced by `to`: a generated file changed on purpose. */
function replaceOnce(code, from, to, what) {
  if (code.split(from).length !== 2) throw new Error(`${what}: expected one ${from}`);
  return code.replace(from, () => to);
}

// The threaded builds in bundlers (docs/API.md, "Threads"). The glue starts its pool workers with
// the literal new Worker(new URL('x.worker.js', import.meta.url)), which Vite and webpack 5 follow:
// they bundle the worker script as a worker. Each worker then imports the glue from
// Module.mainScriptUrlOrBlob (cmake/threads_pre.js), the glue's _scriptDir. Two changes make that
// work under bundlers, a third makes a worker's failure to import it visible:
// - _scriptDir is new URL('./x.mjs', import.meta.url) (the same URL for a plain page and Node): a
//   bundler emits the glue as it ships, an ES module the workers can import, and gives its URL.
//   import.meta.url alone is not enough: webpack replaces it by the build machine's file:// path,
//   and its own copy of the glue is a chunk, not a module a worker can import.
// - the worker script's import() of that URL is kept native (webpackIgnore, @vite-ignore: the
//   comments stay through terser): otherwise webpack makes it a context that cannot resolve it
//   (and warns "Critical dependency"), and the literal fallback import('./x.mjs') pulled the whole
//   glue into the worker bundle (webpack then warned of a circular dependency between the worker
//   and itself; Vite inlined 30 KB the worker never ran).
// - a failure of that import (or of the glue's start in the worker) is thrown again from a timer,
//   an uncaught error of the worker: the page's Worker object (or Node's worker_thread) gets an
//   'error' event, which init() turns into its rejection (cmake/threads_pre.js, posencWatchPool).
//   As Emscripten writes it, the rejection is unhandled inside the worker and the page never hears
//   of it: init() would wait forever.
const WORKER_TERSER_OPTIONS = { ...GLUE_TERSER_OPTIONS, format: { comments: /webpackIgnore|@vite-ignore/ } };
function threadedGlue(name, code) {
  return replaceOnce(code, 'var _scriptDir = import.meta.url;', `var _scriptDir = new URL('./${name}.mjs', import.meta.url).href;`, `${name}.mjs`);
}
function threadedWorker(name, code) {
  return replaceOnce(
    code,
    `(e.data.urlOrBlob?import(e.data.urlOrBlob):import("./${name}.mjs")).then(function(exports){return exports.default(Module)}).then(function(instance){Module=instance})`,
    `import(/* webpackIgnore: true */ /* @vite-ignore */ e.data.urlOrBlob || "./${name}.mjs").then(function(exports){return exports.default(Module)}).then(function(instance){Module=instance},function(error){setTimeout(function(){throw error})})`,
    `${name}.worker.js`,
  );
}

for (const name of modules) {
  copyFileSync(join(build, `${name}.wasm`), join(dist, `${name}.wasm`));
  const source = join(build, `${name}.mjs`);
  let glue = readFileSync(source, 'utf8');
  if (threaded.includes(name)) glue = threadedGlue(name, glue);
  await writeMinified(glue, `${name}.mjs`, { sources: relative(dist, source), options: GLUE_TERSER_OPTIONS });
  if (threaded.includes(name)) {
    // Closure keeps cmake/threads_pre.js's posencWatchPool (and its message) only if PThread's
    // postset (cmake/threads_library.js) still calls it.
    if (!readFileSync(join(dist, `${name}.mjs`), 'utf8').includes('posenc.init: a worker of the thread pool failed to load')) {
      throw new Error(`dist/${name}.mjs: the pool's load watch (cmake/threads_pre.js, posencWatchPool) is missing`);
    }
    const worker = join(build, `${name}.worker.js`);
    const code = threadedWorker(name, readFileSync(worker, 'utf8'));
    await writeMinified(code, `${name}.worker.js`, { sources: relative(dist, worker), options: WORKER_TERSER_OPTIONS });
    const written = readFileSync(join(dist, `${name}.worker.js`), 'utf8');
    if (!/import\(\/\* webpackIgnore: true \*\/ \/\* @vite-ignore \*\//.test(written)) {
      throw new Error(`dist/${name}.worker.js: the import() lost its webpackIgnore / @vite-ignore comments`);
    }
  }
}
// Node's worker_threads behind the Web Worker interface, loaded by the Node entries' threaded init.
{
  const source = join(jsDir, 'node_threads.mjs');
  await writeMinified(readFileSync(source, 'utf8'), 'posenc_node_threads.mjs', { sources: relative(dist, source), options: API_TERSER_OPTIONS });
}
for (const name of entries) {
  const { code, map } = await bundleEntry(name);
  await writeMinified(code, name, { inputMap: map, options: API_TERSER_OPTIONS });
  // What bundlers look for survived bundling and minification: each glue imported by its literal
  // name, each .wasm located by a literal new URL(..., import.meta.url).
  const written = readFileSync(join(dist, name), 'utf8');
  const glues = [...written.matchAll(/\bimport\(["']\.\/(\w+)\.mjs["']\)/g)].map((m) => m[1]).filter((g) => g !== 'posenc_node_threads');
  const wasms = [...written.matchAll(/\bnew URL\(["']\.\/(\w+)\.wasm["'],\s*import\.meta\.url\)/g)].map((m) => m[1]);
  // (The browser entries' threaded build locates its own .wasm: the glue holds that literal.)
  const located = glues.filter((g) => wasms.includes(g) || (threaded.includes(g) && name.includes('browser')));
  if (glues.length !== 3 || located.length !== 3 || glues.some((g) => !modules.includes(g))) {
    throw new Error(`dist/${name}: expected import('./x.mjs') and new URL('./x.wasm', import.meta.url) for three builds, got ${glues} / ${wasms}`);
  }
}
// posenc/multimodal and posenc/relative: plain JavaScript, no glue.
for (const name of ['multimodal.js', 'relative.js']) {
  const { code, map } = await bundleEntry(name);
  await writeMinified(code, name, { inputMap: map, options: API_TERSER_OPTIONS });
}
for (const name of readdirSync(jsDir)) {
  if (name.endsWith('.d.ts')) copyFileSync(join(jsDir, name), join(dist, name));
}
for (const name of ['index.d.ts', 'encoding.d.ts', 'multimodal.d.ts', 'relative.d.ts']) copyFileSync(join(root, 'bindings', name), join(dist, name));
console.log(`posenc: dist/ written (${readdirSync(dist).join(', ')})`);
