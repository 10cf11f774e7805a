// The frozen copy of the package that `npm run bench` times today's build against (bench/frozen.mjs,
// issue 22: no table shape slower than the kernel before the change beyond noise).
//
//   node scripts/build-frozen.mjs [--force]
//
// If build/frozen/<rev>/dist/node.js is missing: extracts FROZEN_REVISION from the repository's git
// (`git archive`, so no checkout and no change to the working tree or the index) into
// build/frozen/<rev>/src, links the root's node_modules into it, runs that revision's own
// scripts/build.mjs (which builds into src/build/wasm-release and src/dist) and copies src/dist to
// build/frozen/<rev>/dist. The copy is put in place only once the build has finished, so a build
// that failed or was interrupted is redone on the next call; the extracted tree and its CMake build
// directory are kept, so that redo is incremental. `--force` rebuilds an existing copy.
//
// Needs what `npm run build` needs (emcc, cmake, ninja, `npm ci`) plus git with the revision in its
// history: a CI clone must not be shallow (actions/checkout: `fetch-depth: 0`).
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The release whose kernel is frozen: the package as of this commit (0.2.0, before issue 22). */
export const FROZEN_REVISION = '215c43f';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const frozenDir = join(root, 'build', 'frozen', FROZEN_REVISION);
/** The frozen package's Node entry, as bench/frozen.mjs imports it. */
export const frozenEntry = join(frozenDir, 'dist', 'node.js');

/** Runs git in the repository; an Error that says what is missing if git or the repository is. */
function git(args, options = {}) {
  try {
    return execFileSync('git', ['-C', root, ...args], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30, ...options });
  } catch (err) {
    if (err.code === 'ENOENT') throw new Error('git is not installed (needed to extract the frozen revision)');
    throw new Error(`git ${args.join(' ')} failed: ${String(err.stderr || err.message).trim().split('\n')[0]}`);
  }
}

/** Checks that FROZEN_REVISION is in the repository's history; throws an Error saying why not. */
function checkRevision() {
  git(['rev-parse', '--git-dir']);
  try {
    return git(['rev-parse', '--verify', '--quiet', `${FROZEN_REVISION}^{commit}`]).toString().trim();
  } catch {
    const shallow = git(['rev-parse', '--is-shallow-repository']).toString().trim() === 'true';
    throw new Error(
      `revision ${FROZEN_REVISION} is not in this repository's history` +
        (shallow ? ' (a shallow clone: run `git fetch --unshallow`, or check out with fetch-depth: 0)' : ''),
    );
  }
}

/**
 * Makes sure the frozen package is built; returns the path of its dist/node.js. Throws an Error with
 * a one-line reason when it cannot (no git, revision not in the history, the build failed).
 * @param {object} [o]
 * @param {boolean} [o.force]  rebuild even if the copy exists
 * @param {(msg: string) => void} [o.log]
 */
export function ensureFrozen({ force = false, log = (s) => console.error(s) } = {}) {
  if (!force && existsSync(frozenEntry)) return frozenEntry;
  const start = performance.now();
  const commit = checkRevision();
  log(`frozen ${FROZEN_REVISION}: building ${commit} into ${frozenDir} (a few minutes)`);
  const src = join(frozenDir, 'src');
  if (!existsSync(join(src, 'package.json'))) {
    // Extracted next to src and renamed, so a half-extracted tree is never taken for a whole one.
    const partial = `${src}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(partial, { recursive: true });
    execFileSync('tar', ['-x', '-C', partial], { input: git(['archive', '--format=tar', commit]), maxBuffer: 1 << 30 });
    rmSync(src, { recursive: true, force: true });
    renameSync(partial, src);
  }
  if (!existsSync(join(src, 'node_modules'))) symlinkSync(join(root, 'node_modules'), join(src, 'node_modules'), 'dir');
  try {
    // Its output goes to stderr, so that a benchmark's stdout stays its table.
    execFileSync(process.execPath, [join(src, 'scripts', 'build.mjs')], { cwd: src, stdio: ['ignore', 2, 2] });
  } catch (err) {
    throw new Error(`building ${FROZEN_REVISION} failed (${err.status === null ? err.signal : `exit ${err.status}`}; its output is above)`);
  }
  if (!existsSync(join(src, 'dist', 'node.js'))) throw new Error(`building ${FROZEN_REVISION} wrote no dist/node.js`);
  const dist = join(frozenDir, 'dist');
  const partialDist = `${dist}.partial`;
  rmSync(partialDist, { recursive: true, force: true });
  cpSync(join(src, 'dist'), partialDist, { recursive: true });
  rmSync(dist, { recursive: true, force: true });
  renameSync(partialDist, dist);
  // dist/*.js are ES modules: say so here rather than rely on the enclosing package.json.
  writeFileSync(join(frozenDir, 'package.json'), `${JSON.stringify({ private: true, type: 'module' })}\n`);
  log(`frozen ${FROZEN_REVISION}: built in ${((performance.now() - start) / 1000).toFixed(0)} s (${dist})`);
  return frozenEntry;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    const entry = ensureFrozen({ force: process.argv.includes('--force'), log: console.log });
    console.log(`frozen ${FROZEN_REVISION}: ${entry}`);
  } catch (err) {
    console.error(`build-frozen: ${err.message}`);
    process.exit(1);
  }
}
