// TEMPORARY development shim, to be deleted when posenc's own rotary / ALiBi / 2D API is merged.
//
// main.js installs it only when the loaded posenc has no `pe.rotary`. It is a plain float64 JS
// version of the API that issue 13 names (pe.rotary, pe.alibiSlopes, pe.alibiBias, pe.encode2d),
// written so the demo sections can be built before the C++ core lands. It follows the Hugging Face
// formulas as far as this page needs them (default, linear, dynamic at its base length, llama3,
// yarn, longrope at the short factors); the library is the reference, not this file.
const fn = (name, msg, Kind = RangeError) => new Kind(`posenc.${name}: ${msg}`);

function positiveInt(name, arg, v) {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw fn(name, `${arg} must be an integer, got ${String(v)}`, TypeError);
  if (v < 1) throw fn(name, `${arg} must be at least 1, got ${v}`);
  return v;
}

function finitePositive(name, arg, v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw fn(name, `${arg} must be a finite number, got ${String(v)}`, TypeError);
  if (v <= 0) throw fn(name, `${arg} must be positive, got ${v}`);
  return v;
}

/** HF's scaling rules, on float64 inverse frequencies. Returns { inv, attentionScaling }. */
function scaleFrequencies(inv, dim, base, s, maxPos) {
  const type = s.rope_type ?? s.type ?? 'default';
  const factor = s.factor;
  const needFactor = () => finitePositive('rotary', `scaling.factor (${type})`, factor);
  if (type === 'default' || type === 'dynamic') return { inv, attentionScaling: 1 };
  if (type === 'linear') {
    const f = needFactor();
    return { inv: inv.map((w) => w / f), attentionScaling: 1 };
  }
  if (type === 'llama3') {
    const f = needFactor();
    const low = s.low_freq_factor ?? 1;
    const high = s.high_freq_factor ?? 4;
    const old = s.original_max_position_embeddings;
    finitePositive('rotary', 'scaling.original_max_position_embeddings (llama3)', old);
    if (!(high > low)) throw fn('rotary', `llama3 scaling needs high_freq_factor > low_freq_factor, got ${high} and ${low}`);
    const lowWave = old / low;
    const highWave = old / high;
    const out = inv.map((w) => {
      const wave = (2 * Math.PI) / w;
      if (wave < highWave) return w;
      if (wave > lowWave) return w / f;
      const smooth = (old / wave - low) / (high - low);
      return (1 - smooth) * (w / f) + smooth * w;
    });
    return { inv: out, attentionScaling: 1 };
  }
  if (type === 'yarn') {
    const f = needFactor();
    const old = s.original_max_position_embeddings ?? maxPos;
    finitePositive('rotary', 'scaling.original_max_position_embeddings (yarn)', old);
    const mscale = (scale, m = 1) => (scale <= 1 ? 1 : 0.1 * m * Math.log(scale) + 1);
    let attentionScaling = s.attention_factor;
    if (attentionScaling == null) {
      attentionScaling = s.mscale && s.mscale_all_dim ? mscale(f, s.mscale) / mscale(f, s.mscale_all_dim) : mscale(f);
    }
    const betaFast = s.beta_fast ?? 32;
    const betaSlow = s.beta_slow ?? 1;
    const corr = (rot) => (dim * Math.log(old / (rot * 2 * Math.PI))) / (2 * Math.log(base));
    const truncate = s.truncate ?? true;
    const lo = Math.max(truncate ? Math.floor(corr(betaFast)) : corr(betaFast), 0);
    let hi = Math.min(truncate ? Math.ceil(corr(betaSlow)) : corr(betaSlow), dim - 1);
    if (lo === hi) hi += 0.001;
    const out = inv.map((w, i) => {
      const ramp = Math.min(Math.max((i - lo) / (hi - lo), 0), 1);
      const extrapolation = 1 - ramp;
      return (w / f) * (1 - extrapolation) + w * extrapolation;
    });
    return { inv: out, attentionScaling };
  }
  if (type === 'longrope') {
    const short = s.short_factor;
    if (!Array.isArray(short) || short.length !== inv.length) {
      throw fn('rotary', `longrope short_factor must be an array of ${inv.length} numbers (rotaryDim / 2), got ${Array.isArray(short) ? `${short.length}` : typeof short}`);
    }
    const old = s.original_max_position_embeddings;
    const f = s.factor ?? (old ? maxPos / old : 1);
    const attentionScaling = s.attention_factor ?? (f <= 1 ? 1 : Math.sqrt(1 + Math.log(f) / Math.log(old)));
    return { inv: inv.map((w, i) => w / short[i]), attentionScaling };
  }
  throw fn('rotary', `unknown rope scaling type '${type}' (allowed: default, linear, dynamic, llama3, yarn, longrope)`);
}

function fromConfig(config) {
  if (typeof config === 'string') {
    try {
      config = JSON.parse(config);
    } catch (err) {
      throw fn('rotary', `config is not valid JSON (${err.message})`, TypeError);
    }
  }
  if (config === null || typeof config !== 'object' || Array.isArray(config)) throw fn('rotary', 'config must be an object', TypeError);
  const heads = config.num_attention_heads ?? config.n_head;
  const hidden = config.hidden_size ?? config.n_embd;
  const headDim = config.head_dim ?? (hidden && heads ? hidden / heads : undefined);
  if (headDim === undefined) throw fn('rotary', 'config has neither head_dim nor hidden_size and num_attention_heads');
  const fraction = config.partial_rotary_factor ?? config.rotary_pct ?? 1;
  const rotaryDim = config.rotary_dim ?? Math.floor((headDim * fraction) / 2) * 2;
  return {
    headDim,
    base: config.rope_theta ?? config.rotary_emb_base ?? 10000,
    rotaryDim,
    layout: config.model_type === 'gptj' ? 'interleaved' : 'half',
    scaling: config.rope_scaling ?? undefined,
    maxPos: config.max_position_embeddings ?? config.n_positions,
    originalMax: config.original_max_position_embeddings,
  };
}

function rotary(options = {}) {
  const o = options.config !== undefined ? fromConfig(options.config) : options;
  const headDim = positiveInt('rotary', 'headDim', o.headDim);
  const base = o.base === undefined ? 10000 : o.base;
  if (typeof base !== 'number' || !Number.isFinite(base)) throw fn('rotary', `base must be a finite number, got ${String(base)}`, TypeError);
  if (!(base > 1)) throw fn('rotary', `base must be greater than 1, got ${base}`);
  const rotaryDim = o.rotaryDim === undefined ? headDim : positiveInt('rotary', 'rotaryDim', o.rotaryDim);
  if (rotaryDim % 2 || rotaryDim > headDim) throw fn('rotary', `rotaryDim must be even and at most headDim (${headDim}), got ${rotaryDim}`);
  const layout = o.layout ?? 'half';
  if (layout !== 'half' && layout !== 'interleaved') throw fn('rotary', `layout must be 'half' or 'interleaved', got ${JSON.stringify(layout)}`);
  const half = rotaryDim / 2;
  let inv = new Float64Array(half).map((_, i) => Math.pow(base, (-2 * i) / rotaryDim));
  let attentionScaling = 1;
  if (o.scaling != null) {
    const s = { ...o.scaling };
    if (o.originalMax) s.original_max_position_embeddings = o.originalMax; // the top-level one wins (Phi-3)
    ({ inv, attentionScaling } = scaleFrequencies(inv, rotaryDim, base, s, o.maxPos));
  }
  const pair = layout === 'half' ? (i) => [i, i + half] : (i) => [2 * i, 2 * i + 1];
  const positionsOf = (L, opts) => {
    const offset = opts.offset ?? 0;
    if (opts.positions !== undefined) {
      if (opts.positions.length !== L) throw fn('rotary', `positions has ${opts.positions.length} entries, the input has ${L} rows`);
      return opts.positions;
    }
    return Float64Array.from({ length: L }, (_, r) => offset + r);
  };
  let disposed = false;
  const live = () => {
    if (disposed) throw fn('rotary', 'this rotary object was disposed', Error);
  };
  return {
    headDim,
    rotaryDim,
    layout,
    base,
    inverseFrequencies: inv,
    attentionScaling,
    apply(x, opts = {}) {
      live();
      if (!(x instanceof Float32Array)) throw fn('rotary.apply', 'x must be a Float32Array', TypeError);
      const heads = opts.heads ?? 1;
      positiveInt('rotary.apply', 'heads', heads);
      if (x.length % (heads * headDim)) throw fn('rotary.apply', `x.length ${x.length} is not a multiple of heads x headDim = ${heads * headDim}`);
      const L = x.length / (heads * headDim);
      const pos = positionsOf(L, opts);
      for (let r = 0; r < L; r++) {
        for (let i = 0; i < half; i++) {
          const a = pos[r] * inv[i];
          const c = Math.cos(a) * attentionScaling;
          const s = Math.sin(a) * attentionScaling;
          const [j, k] = pair(i);
          for (let h = 0; h < heads; h++) {
            const o0 = (r * heads + h) * headDim;
            const u = x[o0 + j];
            const v = x[o0 + k];
            x[o0 + j] = u * c - v * s;
            x[o0 + k] = v * c + u * s;
          }
        }
      }
      return x;
    },
    cosSin(length, opts = {}) {
      live();
      positiveInt('rotary.cosSin', 'length', length);
      const pos = positionsOf(length, opts);
      const cos = new Float32Array(length * rotaryDim);
      const sin = new Float32Array(length * rotaryDim);
      for (let r = 0; r < length; r++) {
        for (let i = 0; i < half; i++) {
          const a = pos[r] * inv[i];
          for (const j of pair(i)) {
            cos[r * rotaryDim + j] = Math.cos(a) * attentionScaling;
            sin[r * rotaryDim + j] = Math.sin(a) * attentionScaling;
          }
        }
      }
      return { cos, sin };
    },
    dispose() {
      disposed = true;
    },
    [Symbol.dispose]() {
      disposed = true;
    },
  };
}

function slopesPow2(n) {
  const start = 2 ** (-8 / n);
  return Array.from({ length: n }, (_, i) => start ** (i + 1));
}

function alibiSlopes(heads) {
  positiveInt('alibiSlopes', 'heads', heads);
  const m = 2 ** Math.floor(Math.log2(heads));
  const s = slopesPow2(m);
  if (m !== heads) s.push(...slopesPow2(2 * m).filter((_, i) => i % 2 === 0).slice(0, heads - m));
  return Float64Array.from(s);
}

function alibiBias(heads, queryLength, keyLength, options = {}) {
  const slopes = alibiSlopes(heads);
  positiveInt('alibiBias', 'queryLength', queryLength);
  positiveInt('alibiBias', 'keyLength', keyLength);
  const mode = options.mode ?? 'causal';
  if (mode !== 'causal' && mode !== 'symmetric') throw fn('alibiBias', `mode must be 'causal' or 'symmetric', got ${JSON.stringify(mode)}`);
  const offset = options.offset ?? keyLength - queryLength;
  const out = new Float32Array(heads * queryLength * keyLength);
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < queryLength; i++) {
      const q = offset + i;
      for (let j = 0; j < keyLength; j++) {
        const idx = (h * queryLength + i) * keyLength + j;
        out[idx] = mode === 'causal' && j > q ? -Infinity : -slopes[h] * Math.abs(q - j);
      }
    }
  }
  return out;
}

function encode2d(height, width, dim, options = {}) {
  positiveInt('encode2d', 'height', height);
  positiveInt('encode2d', 'width', width);
  positiveInt('encode2d', 'dim', dim);
  if (dim % 4) throw fn('encode2d', `dim must be a multiple of 4, got ${dim}`);
  const preset = options.preset ?? 'mae';
  if (preset !== 'mae' && preset !== 'timm') throw fn('encode2d', `preset must be 'mae' or 'timm', got ${JSON.stringify(preset)}`);
  const base = options.base ?? 10000;
  const cls = options.clsToken ? 1 : 0;
  const q = dim / 4;
  const out = new Float32Array((cls + height * width) * dim);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (cls + y * width + x) * dim;
      // MAE: [sin x | cos x | sin y | cos y] (x the column); timm: [sin y | sin x | cos y | cos x]
      for (let i = 0; i < q; i++) {
        const omega = 1 / Math.pow(base, i / q);
        const blocks = preset === 'mae'
          ? [Math.sin(x * omega), Math.cos(x * omega), Math.sin(y * omega), Math.cos(y * omega)]
          : [Math.sin(y * omega), Math.sin(x * omega), Math.cos(y * omega), Math.cos(x * omega)];
        for (let b = 0; b < 4; b++) out[o + b * q + i] = blocks[b];
      }
    }
  }
  return out;
}

/** Adds the shim's functions to `pe` (only call when pe.rotary is missing). */
export function installDevShim(pe) {
  Object.assign(pe, { rotary, alibiSlopes, alibiBias, encode2d, devShim: true });
  return pe;
}
