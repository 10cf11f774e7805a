// What the core hands the JavaScript layer: its limits, the enum names, the preset table, the
// layer's tensors, and handles over its encoder, layer and model. Every fallible handle call
// returns a code (0 = ok); after a nonzero one, handle.error() is { argument, message }.
// Nothing here checks arguments; the modules that use it do.

const decoder = new TextDecoder();

/** The NUL-terminated UTF-8 string at ptr in wasm memory ('' for a null pointer). */
function readString(Module, ptr) {
  if (!ptr) return '';
  const heap = Module.HEAPU8;
  let end = ptr;
  while (heap[end] !== 0) end++;
  return decoder.decode(heap.subarray(ptr, end));
}

// Calls fill(ptr) with room for count doubles in wasm memory and returns them.
function readNumbers(Module, count, fill) {
  const ptr = Module._malloc(count * 8);
  if (!ptr) throw new RangeError('posenc: not enough wasm memory');
  try {
    fill(ptr);
    return Array.from(Module.HEAPF64.subarray(ptr / 8, ptr / 8 + count));
  } finally {
    Module._free(ptr);
  }
}

// The order of posenc_preset_numbers() and posenc_model_numbers().
const PRESET_FIELDS = ['layout', 'frequencies', 'odd', 'minDim', 'firstPosition', 'usesPaddingIdx'];
const MODEL_FIELDS = [
  'vocabSize', 'numClasses', 'numLayers', 'dModel', 'heads', 'ffDim', 'normFirst', 'activation',
  'layerNormEps', 'embeddingScale',
];

/** Every preset as { name, source, layout, frequencies, odd, minDim, firstPosition, usesPaddingIdx }. */
function presetRecords(Module) {
  const records = [];
  for (let i = 0; i < Module._posenc_preset_count(); i++) {
    const numbers = readNumbers(Module, PRESET_FIELDS.length, (ptr) => Module._posenc_preset_numbers(i, ptr));
    const record = { name: readString(Module, Module._posenc_preset_name(i)), source: readString(Module, Module._posenc_preset_source(i)) };
    PRESET_FIELDS.forEach((field, k) => (record[field] = numbers[k]));
    record.usesPaddingIdx = record.usesPaddingIdx !== 0;
    records.push(record);
  }
  return records;
}

/** The argument a posenc::Status is about ('' if none) and its message. */
function statusText(Module, status) {
  return {
    argument: readString(Module, Module._posenc_status_argument(status)),
    message: readString(Module, Module._posenc_status_message(status)),
  };
}

function created(ptr, what) {
  if (!ptr) throw new RangeError(`posenc: not enough wasm memory for a ${what}`);
  return ptr;
}

/** A new encoder-layer handle (posenc_layer_*); delete() frees it. */
function newLayerHandle(Module) {
  const h = created(Module._posenc_layer_create(), 'layer');
  return {
    configure: (dModel, heads, ffDim, normFirst, activation, eps) =>
      Module._posenc_layer_configure(h, dModel, heads, ffDim, normFirst, activation, eps),
    // Copies the tensor name into wasm memory for the call (names are ASCII state_dict keys).
    setTensor(name, data, count) {
      const ptr = Module._malloc(name.length + 1);
      if (!ptr) throw new RangeError('posenc: not enough wasm memory');
      try {
        for (let i = 0; i < name.length; i++) Module.HEAPU8[ptr + i] = name.charCodeAt(i);
        Module.HEAPU8[ptr + name.length] = 0;
        return Module._posenc_layer_set_tensor(h, ptr, data, count);
      } finally {
        Module._free(ptr);
      }
    },
    forward: (x, length, causal, mask, out) => Module._posenc_layer_forward(h, x, length, causal, mask, out),
    attention: () => Module._posenc_layer_attention(h),
    attentionLength: () => Module._posenc_layer_attention_length(h),
    error: () => ({ argument: '', message: readString(Module, Module._posenc_layer_error_message(h)) }),
    delete: () => Module._posenc_layer_destroy(h),
  };
}

/** A new model handle (posenc_model_*); delete() frees it. */
function newModelHandle(Module) {
  const h = created(Module._posenc_model_create(), 'model');
  return {
    load: (bytes, size) => Module._posenc_model_load(h, bytes, size),
    forward: (tokens, length, causal, mask, usePe, out) =>
      Module._posenc_model_forward(h, tokens, length, causal, mask, usePe, out),
    attention: (layer) => Module._posenc_model_attention(h, layer),
    attentionLength: () => Module._posenc_model_attention_length(h),
    error: () => ({ argument: '', message: readString(Module, Module._posenc_model_error_message(h)) }),
    /** The loaded model's config, vocabulary and labels (as the old embind ModelInfo). */
    info() {
      const numbers = readNumbers(Module, MODEL_FIELDS.length, (ptr) => Module._posenc_model_numbers(h, ptr));
      const info = {};
      MODEL_FIELDS.forEach((field, k) => (info[field] = numbers[k]));
      info.normFirst = info.normFirst !== 0;
      info.activation = info.activation === 1 ? 'gelu' : 'relu';
      info.positionalEncoding = readString(Module, Module._posenc_model_positional_encoding(h));
      info.vocab = readString(Module, Module._posenc_model_vocab(h));
      info.labels = readString(Module, Module._posenc_model_labels(h));
      return info;
    },
    delete: () => Module._posenc_model_destroy(h),
  };
}

function newEncoderHandle(Module, s) {
  const ptr = Module._posenc_encoder_create(s.dim, s.base, s.minTimescale, s.layout, s.frequencies, s.odd, s.minDim);
  if (!ptr) return null;
  let last = Module._posenc_encoder_status(ptr);
  const keep = (code) => (last = code);
  return {
    status: () => last,
    encode: (n, first, pp, zp, zeroPosition, out, len) =>
      keep(Module._posenc_encoder_encode(ptr, n, first, pp, zp, zeroPosition, out, len)),
    addTo: (n, first, pp, zp, zeroPosition, scale, emb, len) =>
      keep(Module._posenc_encoder_add_to(ptr, n, first, pp, zp, zeroPosition, scale, emb, len)),
    concat: (n, first, pp, zp, zeroPosition, emb, embLen, embDim, out, outLen) =>
      keep(Module._posenc_encoder_concat(ptr, n, first, pp, zp, zeroPosition, emb, embLen, embDim, out, outLen)),
    shiftMatrix: (k, out, len) => keep(Module._posenc_encoder_shift_matrix(ptr, k, out, len)),
    shiftBlocks: (k, out, len) => keep(Module._posenc_encoder_shift_blocks(ptr, k, out, len)),
    sines: Module._posenc_encoder_sines(ptr),
    blockRows: Module._posenc_encoder_block_rows(ptr),
    error: () => statusText(Module, last),
    delete: () => Module._posenc_encoder_destroy(ptr),
  };
}

const LAYER_NAMES = [
  'self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight',
  'self_attn.out_proj.bias', 'linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias',
  'norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias',
];

/** The twelve layer tensors for a config, in state_dict order: { name, dims, dimNames }. */
function layerTensors(dModel, ffDim) {
  const shapes = {
    'self_attn.in_proj_weight': [[3 * dModel, dModel], '3 dModel x dModel'],
    'self_attn.in_proj_bias': [[3 * dModel], '3 dModel'],
    'self_attn.out_proj.weight': [[dModel, dModel], 'dModel x dModel'],
    'linear1.weight': [[ffDim, dModel], 'ffDim x dModel'],
    'linear1.bias': [[ffDim], 'ffDim'],
    'linear2.weight': [[dModel, ffDim], 'dModel x ffDim'],
  };
  return LAYER_NAMES.map((name) => {
    const [dims, dimNames] = shapes[name] ?? [[dModel], 'dModel'];
    return { name, dims, dimNames };
  });
}

/** The core of one instantiated module. */
export function readCore(Module) {
  return {
    limits: {
      maxDim: 65536,
      maxPosition: 2147483647,
      maxElements: 2147483647,
      maxModelDim: 8192,
      maxHeads: 256,
      maxFfDim: 65536,
      maxSequenceLength: 8192,
    },
    layouts: ['interleaved', 'split'],
    frequencies: ['paper', 'half'],
    oddDims: ['paper', 'zero-pad', 'reject'],
    activations: ['relu', 'gelu'],
    presets: presetRecords(Module),
    layerTensors,
    newEncoder: (spec) => newEncoderHandle(Module, spec),
    newLayer: () => newLayerHandle(Module),
    newModel: () => newModelHandle(Module),
  };
}
