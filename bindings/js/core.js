// What the core hands the JavaScript layer, read once per instance from its embind registrations
// (bindings/bind_*.cpp): the limits (constant), the enum names in the core's order (enum_), the
// preset table and the layer's tensors (value_object), and the classes SinusoidalEncoder,
// TransformerEncoderLayer and Model. Nothing here checks arguments; the modules that use it do.
//
// Error convention of every bound call that can fail: it returns 0 or a nonzero code, and the
// object's error() is then { argument, message } (argument may be ''). Embind objects must be
// delete()d: lifetime.js and the encoder cache do that.

/** The names of an embind enum_, indexed by value: ['interleaved', 'split']. */
function enumNames(Enum) {
  const names = [];
  for (const name of Object.keys(Enum)) {
    if (name !== 'values') names[Enum[name].value] = name;
  }
  return names;
}

/** The core of one instantiated module. */
export function readCore(Module) {
  const layouts = enumNames(Module.Layout);
  const frequencies = enumNames(Module.Frequencies);
  const oddDims = enumNames(Module.OddDim);
  // The transformer's registrations are absent from posenc/encoding's module (bind_nn.cpp).
  const activations = Module.Activation ? enumNames(Module.Activation) : [];

  // Presets with their enums as indices into the name lists above.
  const presets = [];
  for (let i = 0; i < Module.PRESET_COUNT; i++) {
    const { name, source, spec, firstPosition, usesPaddingIdx } = Module.preset(i);
    presets.push({
      name,
      source,
      layout: spec.layout.value,
      frequencies: spec.frequencies.value,
      odd: spec.odd.value,
      minDim: spec.minDim,
      exactFrequencies: spec.exactFrequencies,
      firstPosition,
      usesPaddingIdx,
    });
  }

  return {
    limits: {
      maxDim: Module.MAX_DIM,
      maxPosition: Module.MAX_POSITION,
      maxElements: Module.MAX_ELEMENTS,
      maxModelDim: Module.MAX_MODEL_DIM,
      maxHeads: Module.MAX_HEADS,
      maxFfDim: Module.MAX_FF_DIM,
      maxSequenceLength: Module.MAX_SEQUENCE_LENGTH,
    },
    layouts,
    frequencies,
    oddDims,
    activations,
    presets,

    /** The layer's state_dict tensors for a config, in PyTorch's order: { name, dims, dimNames }. */
    layerTensors(dModel, ffDim) {
      const tensors = [];
      for (let i = 0; i < Module.LAYER_TENSOR_COUNT; i++) {
        const { name, ndim, rows, cols, dimNames } = Module.layerTensor(i, dModel, ffDim);
        tensors.push({ name, dims: ndim === 1 ? [rows] : [rows, cols], dimNames });
      }
      return tensors;
    },

    /** A core SinusoidalEncoder for a resolved spec (spec.js: enums as indices); check status(). */
    newEncoder(s) {
      return new Module.SinusoidalEncoder({
        dim: s.dim,
        base: s.base,
        minTimescale: s.minTimescale,
        layout: Module.Layout[layouts[s.layout]],
        frequencies: Module.Frequencies[frequencies[s.frequencies]],
        odd: Module.OddDim[oddDims[s.odd]],
        minDim: s.minDim,
        exactFrequencies: s.exactFrequencies,
      });
    },

    /** A new, unconfigured TransformerEncoderLayer. */
    newLayer: () => new Module.TransformerEncoderLayer(),

    /** The LayerConfig value a layer's configure() takes, from the API's config (activation by name). */
    layerConfig: (config) => ({
      ...config,
      activation: Module.Activation[config.activation],
      position: ['none', 'rotary', 'alibi'].indexOf(config.position),
      rotaryLayout: ['half', 'interleaved'].indexOf(config.rotaryLayout),
      alibiMode: ['causal', 'symmetric'].indexOf(config.alibiMode),
    }),

    /** A new, empty Model. */
    newModel: () => new Module.Model(),

    /** A loaded model's config, vocabulary and labels, flat, with activation by name. */
    modelInfo(model) {
      const { layer, ...rest } = model.info();
      return {
        ...rest,
        ...layer,
        activation: activations[layer.activation.value],
        position: ['none', 'rotary', 'alibi'][layer.position],
        rotaryLayout: ['half', 'interleaved'][layer.rotaryLayout],
        alibiMode: ['causal', 'symmetric'][layer.alibiMode],
      };
    },
  };
}
