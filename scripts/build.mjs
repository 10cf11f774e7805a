// `npm run build`: compiles the C++ core and bindings to wasm (SIMD and baseline) with
// Emscripten through CMake, then assembles dist/ (glue, .wasm, JS API, types).
//
// The JavaScript that ships (the API in bindings/js/ and the Emscripten glue) is minified with
// terser, with a source map next to each file (sources included), so the package stays inside its
// gzipped size budget (README.md, "Bundlers"; tests/js/size.test.mjs) while bindings/js/ stays the
// readable source. Only local names are mangled: exported names, property names, function names
// (keep_fnames) and every error message are unchanged.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { minify } from 'terser';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const build = join(root, 'build', 'wasm-release');
const dist = join(root, 'dist');
// Debian's emcc needs NODE_PATH to find acorn (see the README's build notes).
const env = { ...process.env, NODE_PATH: process.env.NODE_PATH || '/usr/share/nodejs' };
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, env, stdio: 'inherit' });

run('emcmake', ['cmake', '-S', '.', '-B', build, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release', '-DPOSENC_BUILD_TESTS=OFF']);
// The main entry's modules (every binding) and posenc/encoding's (no transformer).
const modules = ['posenc_simd', 'posenc_baseline', 'posenc_encoding_simd', 'posenc_encoding_baseline'];
const targets = ['posenc_simd', 'posenc_baseline_module', 'posenc_encoding_simd', 'posenc_encoding_baseline_module'];
run('cmake', ['--build', build, '--target', ...targets]);

/** Writes the minified `source` file as dist/name plus dist/name.map (sources relative to dist/). */
async function writeMinified(source, name) {
  const code = readFileSync(source, 'utf8');
  const result = await minify(
    { [relative(dist, source)]: code },
    {
      module: true,
      ecma: 2020,
      compress: { passes: 2 },
      mangle: true,
      keep_fnames: true,
      sourceMap: { filename: name, url: `${name}.map`, includeSources: true },
    },
  );
  writeFileSync(join(dist, name), `${result.code}\n`);
  writeFileSync(join(dist, `${name}.map`), result.map);
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
for (const name of modules) {
  copyFileSync(join(build, `${name}.wasm`), join(dist, `${name}.wasm`));
  await writeMinified(join(build, `${name}.mjs`), `${name}.mjs`);
}
const jsDir = join(root, 'bindings', 'js');
for (const name of readdirSync(jsDir)) {
  if (name.endsWith('.d.ts')) copyFileSync(join(jsDir, name), join(dist, name));
  else if (name.endsWith('.js')) await writeMinified(join(jsDir, name), name);
}
for (const name of ['index.d.ts', 'encoding.d.ts']) copyFileSync(join(root, 'bindings', name), join(dist, name));
console.log(`posenc: dist/ written (${readdirSync(dist).join(', ')})`);
