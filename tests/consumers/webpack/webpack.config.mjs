// A plain webpack 5 production build. Nothing here is posenc-specific: webpack 5 turns the
// package's `new URL('./x.wasm', import.meta.url)` into an emitted asset by default, and the
// dynamic import of the chosen Emscripten glue into a chunk.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Copies index.html into the output (html-webpack-plugin would do; this needs no dependency). */
class EmitIndexHtml {
  apply(compiler) {
    const { RawSource } = compiler.webpack.sources;
    compiler.hooks.thisCompilation.tap('EmitIndexHtml', (compilation) => {
      compilation.hooks.processAssets.tap(
        { name: 'EmitIndexHtml', stage: compiler.webpack.Compilation.PROCESS_ASSETS_STAGE_ADDITIONAL },
        () => compilation.emitAsset('index.html', new RawSource(readFileSync(join(here, 'index.html')))),
      );
    });
  }
}

export default {
  mode: 'production',
  entry: './shared/page.mjs',
  output: { path: join(here, 'dist'), filename: 'main.js', clean: true },
  plugins: [new EmitIndexHtml()],
};
