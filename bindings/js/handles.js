// Thin JavaScript handles over the plain C exports of bindings/exports_presets.cpp and
// bindings/exports_layer.cpp: the preset table, status strings, and the layer and model handles
// that bindings/js/layer.js drives. Nothing here checks arguments; api.js and layer.js do.

const decoder = new TextDecoder();

/** The NUL-terminated UTF-8 string at ptr in wasm memory ('' for a null pointer). */
export function readString(Module, ptr) {
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
export function presetRecords(Module) {
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
export function statusText(Module, status) {
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
export function newLayerHandle(Module) {
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
    attentionPtr: () => Module._posenc_layer_attention(h),
    attentionLength: () => Module._posenc_layer_attention_length(h),
    errorMessage: () => readString(Module, Module._posenc_layer_error_message(h)),
    delete: () => Module._posenc_layer_destroy(h),
  };
}

/** A new model handle (posenc_model_*); delete() frees it. */
export function newModelHandle(Module) {
  const h = created(Module._posenc_model_create(), 'model');
  return {
    load: (bytes, size) => Module._posenc_model_load(h, bytes, size),
    forward: (tokens, length, causal, mask, usePe, out) =>
      Module._posenc_model_forward(h, tokens, length, causal, mask, usePe, out),
    attentionPtr: (layer) => Module._posenc_model_attention(h, layer),
    attentionLength: () => Module._posenc_model_attention_length(h),
    errorMessage: () => readString(Module, Module._posenc_model_error_message(h)),
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
