// `npm run build`: compiles the C++ core and bindings to wasm (SIMD and baseline) with
// Emscripten through CMake, then assembles dist/ (glue, .wasm, JS API, types).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const build = join(root, 'build', 'wasm-release');
const dist = join(root, 'dist');
// Debian's emcc needs NODE_PATH to find acorn (see the README's build notes).
const env = { ...process.env, NODE_PATH: process.env.NODE_PATH || '/usr/share/nodejs' };
const run = (cmd, args) => execFileSync(cmd, args, { cwd: root, env, stdio: 'inherit' });

run('emcmake', ['cmake', '-S', '.', '-B', build, '-G', 'Ninja', '-DCMAKE_BUILD_TYPE=Release', '-DPOSENC_BUILD_TESTS=OFF']);
run('cmake', ['--build', build, '--target', 'posenc_simd', 'posenc_baseline_module']);

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
for (const name of ['posenc_simd.mjs', 'posenc_simd.wasm', 'posenc_baseline.mjs', 'posenc_baseline.wasm']) {
  copyFileSync(join(build, name), join(dist, name));
}
const jsDir = join(root, 'bindings', 'js');
for (const name of readdirSync(jsDir)) {
  if (name.endsWith('.js') || name.endsWith('.d.ts')) copyFileSync(join(jsDir, name), join(dist, name));
}
copyFileSync(join(root, 'bindings', 'index.d.ts'), join(dist, 'index.d.ts'));
console.log(`posenc: dist/ written (${readdirSync(dist).join(', ')})`);
