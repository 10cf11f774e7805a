// Spec resolution: a dim and the spec options (preset, base, minTimescale, layout, frequencies,
// odd) -> a validated spec, with the enum indices and limits the core handed over (core.js).

import { checkEnum, checkNumber, rangeError, typeError } from './check.js';

export const SPEC_OPTIONS = ['preset', 'base', 'minTimescale', 'layout', 'frequencies', 'odd'];

/**
 * The spec helpers of one instance: { presets (public, frozen), resolveSpec, specKey, names }.
 * resolveSpec(fn, dim, options, dimName) returns { preset, dim, base, minTimescale, layout,
 * frequencies, odd, minDim } (enums as the core's indices) or throws.
 */
export function createSpecs(core) {
  const { maxDim, maxPosition } = core.limits;
  const names = { layout: core.layouts, frequencies: core.frequencies, odd: core.oddDims };
  const presetList = core.presets.map((p) => Object.freeze({ ...p }));
  const presetsByName = new Map(presetList.map((p) => [p.name, p]));
  const presetNames = `one of '${presetList.map((p) => p.name).join("', '")}'`;
  const rejectOdd = core.oddDims.indexOf('reject');

  // dimName is the name of the caller's argument that holds the encoding's width (peDim for concat).
  function resolveSpec(fn, dim, options, dimName = 'dim') {
    checkNumber(fn, dimName, dim, { integer: true, min: 1, max: maxDim });
    const presetName = options.preset === undefined ? 'vaswani' : options.preset;
    if (typeof presetName !== 'string') throw typeError(fn, 'preset', presetNames, presetName);
    const preset = presetsByName.get(presetName);
    if (!preset) throw rangeError(fn, 'preset', presetNames, presetName);
    const spec = {
      preset,
      dim,
      base: 10000,
      minTimescale: 1,
      layout: preset.layout,
      frequencies: preset.frequencies,
      odd: preset.odd,
      minDim: preset.minDim,
      exactFrequencies: preset.exactFrequencies,
    };
    if (options.base !== undefined) spec.base = checkNumber(fn, 'base', options.base, { above: 1 });
    if (options.minTimescale !== undefined) {
      spec.minTimescale = checkNumber(fn, 'minTimescale', options.minTimescale, { above: 0 });
    }
    if (!Number.isFinite(spec.base / spec.minTimescale) || !Number.isFinite(spec.minTimescale * maxPosition)) {
      throw new RangeError(
        `posenc.${fn}: minTimescale must keep base / minTimescale and minTimescale * 2^31 finite, got ${spec.minTimescale}`,
      );
    }
    if (!(spec.base > spec.minTimescale)) {
      throw new RangeError(`posenc.${fn}: base (${spec.base}) must be greater than minTimescale (${spec.minTimescale})`);
    }
    if (options.layout !== undefined) spec.layout = checkEnum(fn, 'layout', options.layout, names.layout);
    if (options.frequencies !== undefined) {
      spec.frequencies = checkEnum(fn, 'frequencies', options.frequencies, names.frequencies);
    }
    if (options.odd !== undefined) spec.odd = checkEnum(fn, 'odd', options.odd, names.odd);
    if (dim < spec.minDim) {
      throw new RangeError(`posenc.${fn}: ${dimName} must be at least ${spec.minDim} for preset '${preset.name}', got ${dim}`);
    }
    if (spec.odd === rejectOdd && dim % 2 !== 0) {
      throw new RangeError(`posenc.${fn}: ${dimName} must be even for ${options.odd === 'reject' ? "odd: 'reject'" : `preset '${preset.name}'`}, got ${dim}`);
    }
    return spec;
  }

  function specKey(s) {
    return `${s.dim}|${s.base}|${s.minTimescale}|${s.layout}|${s.frequencies}|${s.odd}|${s.minDim}|${s.exactFrequencies}`;
  }

  const presets = Object.freeze(
    presetList.map((p) =>
      Object.freeze({
        name: p.name,
        source: p.source,
        layout: names.layout[p.layout],
        frequencies: names.frequencies[p.frequencies],
        odd: names.odd[p.odd],
        minDim: p.minDim,
        exactFrequencies: p.exactFrequencies,
        firstPosition: p.usesPaddingIdx ? 'paddingIdx + 1' : p.firstPosition,
      }),
    ),
  );

  return { presets, resolveSpec, specKey, names };
}
