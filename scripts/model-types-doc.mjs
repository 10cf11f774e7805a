// Writes docs/MODELS.md's table from pe.rotaryModelTypes (the core's model rules), so the document
// and the package cannot disagree (tests/js/models.test.mjs checks that the file is current).
// Run after `npm run build`: node scripts/model-types-doc.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const doc = join(root, 'docs', 'MODELS.md');

/** The table's markdown for the rules of a posenc instance. */
export function modelTable(types) {
  const rows = types.map((t) => `| \`${t.modelType}\` | ${t.family} | ${t.layout} | ${t.headDim} | ${t.partialRotaryFactor} | ${t.layers} | ${t.attention} | ${t.multimodal ?? ''} |`);
  return ['| model_type | family | layout | head dim | partial_rotary_factor default | RoPE per layer | attention per layer | multimodal |',
    '|---|---|---|---|---|---|---|---|', ...rows].join('\n');
}

/** docs/MODELS.md with its table replaced between the markers. */
export function withTable(text, table) {
  const start = '<!-- model-table -->';
  const end = '<!-- /model-table -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error('docs/MODELS.md lacks the model-table markers');
  return `${text.slice(0, a + start.length)}\n${table}\n${text.slice(b)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { init } = await import(pathToFileURL(join(root, 'dist', 'node.js')).href);
  const pe = await init();
  writeFileSync(doc, withTable(readFileSync(doc, 'utf8'), modelTable(pe.rotaryModelTypes)));
  console.log(`docs/MODELS.md: ${pe.rotaryModelTypes.length} model types`);
}
