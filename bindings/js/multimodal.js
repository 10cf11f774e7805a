// Entry `posenc/multimodal`: the position ids of multimodal sequences (Qwen-VL's get_rope_index)
// and the 2D RoPE of vision towers (rotary2d, on a posenc instance), plain JavaScript with no wasm
// and no init(): an app that feeds an ONNX or transformers.js model imports only this, and an app
// that imports the main entry does not load it.
export { ROPE_INDEX_MODEL_TYPES, ropeIndex } from './rope_index.js';
export { ROTARY2D_MODELS, rotary2d } from './rotary2d.js';
