// pe.rotaryPresets: the RoPE part of common models' Hugging Face config.json, keyed by a short
// model name. Each entry keeps the keys as the model's config writes them (only those pe.rotary
// reads: head shape, base, partial rotary, context lengths, rope_scaling), so
// pe.rotary({ preset: name }) is pe.rotary({ config: <that model's config.json> }). Every entry is
// the config of a fixture in tests/fixtures/rotary/ (its README gives each source) restricted to
// those keys; tests/js/rotary.test.mjs checks both give the same frequencies, bit for bit.

function deepFreeze(value) {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const float32 = (list) => list.map(Math.fround);

export const ROTARY_PRESETS = deepFreeze({
  // meta-llama/Llama-2-7b-hf: tests/fixtures/rotary/hf-llama-2-7b.json
  'llama-2-7b': {
    model_type: 'llama',
    hidden_size: 4096,
    num_attention_heads: 32,
    max_position_embeddings: 4096,
  },
  // meta-llama/Llama-3.1-8B: tests/fixtures/rotary/hf-llama-3.1-8b.json
  'llama-3.1-8b': {
    model_type: 'llama',
    hidden_size: 4096,
    num_attention_heads: 32,
    rope_theta: 500000,
    max_position_embeddings: 131072,
    rope_scaling: {
      factor: 8,
      low_freq_factor: 1,
      high_freq_factor: 4,
      original_max_position_embeddings: 8192,
      rope_type: 'llama3',
    },
  },
  // mistralai/Mistral-7B-v0.1: tests/fixtures/rotary/hf-mistral-7b-v0.1.json
  'mistral-7b-v0.1': {
    model_type: 'mistral',
    hidden_size: 4096,
    num_attention_heads: 32,
    rope_theta: 10000,
    max_position_embeddings: 32768,
  },
  // mistralai/Mistral-Nemo-Base-2407: tests/fixtures/rotary/hf-mistral-nemo.json
  'mistral-nemo-2407': {
    model_type: 'mistral',
    hidden_size: 5120,
    num_attention_heads: 32,
    head_dim: 128,
    rope_theta: 1000000,
    max_position_embeddings: 131072,
  },
  // Qwen/Qwen2-7B: tests/fixtures/rotary/hf-qwen2-7b.json
  'qwen2-7b': {
    model_type: 'qwen2',
    hidden_size: 3584,
    num_attention_heads: 28,
    rope_theta: 1000000,
    max_position_embeddings: 131072,
  },
  // Qwen/Qwen2.5-7B-Instruct: tests/fixtures/rotary/hf-qwen2.5-7b-instruct-yarn.json
  'qwen2.5-7b-instruct-yarn': {
    model_type: 'qwen2',
    hidden_size: 3584,
    num_attention_heads: 28,
    rope_theta: 1000000,
    max_position_embeddings: 32768,
    rope_scaling: {
      factor: 4,
      original_max_position_embeddings: 32768,
      type: 'yarn',
    },
  },
  // microsoft/Phi-3-mini-128k-instruct: tests/fixtures/rotary/hf-phi-3-mini-128k-instruct.json
  'phi-3-mini-128k-instruct': {
    model_type: 'phi3',
    hidden_size: 3072,
    num_attention_heads: 32,
    rope_theta: 10000,
    max_position_embeddings: 131072,
    original_max_position_embeddings: 4096,
    rope_scaling: {
      // float32 values in the config: each the float32 nearest to the decimal written here
      long_factor: float32([
        1.07, 1.12, 1.15, 1.42, 1.5699999, 1.8, 2.1299999, 2.1299999, 3.01, 5.9100003,
        6.9500003, 9.070001, 9.93, 10.71, 11.13, 14.61, 15.409999, 19.81, 37.28, 38.28, 38.6,
        40.120003, 46.200005, 50.940006, 53.660007, 54.93739, 56.89739, 57.287388, 59.987385,
        60.867386, 60.887386, 61.717392, 62.917393, 62.957394, 63.417393, 63.817394,
        63.837395, 63.897396, 63.937397, 64.0674, 64.11435, 64.12435, 64.15435, 64.19435,
        64.244354, 64.574356, 64.69, 64.76,
      ]),
      short_factor: [
        1.1, 1.1, 1.1, 1.3000000000000003, 1.3500000000000003, 1.3500000000000003,
        1.4000000000000004, 1.5500000000000005, 2.000000000000001, 2.000000000000001,
        2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
        2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
        2.000000000000001, 2.000000000000001, 2.000000000000001, 2.000000000000001,
        2.000000000000001, 2.000000000000001, 2.000000000000001, 2.0500000000000007,
        2.0500000000000007, 2.0500000000000007, 2.0500000000000007, 2.0500000000000007,
        2.0500000000000007, 2.1000000000000005, 2.1000000000000005, 2.1500000000000004, 2.25,
        2.25, 2.25, 2.25, 2.25, 2.3999999999999995, 2.4499999999999993, 2.499999999999999,
        2.6999999999999984, 2.6999999999999984, 2.7499999999999982, 2.799999999999998,
        2.8999999999999977, 3.049999999999997,
      ],
      type: 'longrope',
    },
  },
  // openai/gpt-oss-20b: tests/fixtures/rotary/hf-gpt-oss-20b-yarn.json
  'gpt-oss-20b': {
    model_type: 'gpt_oss',
    hidden_size: 2880,
    num_attention_heads: 64,
    head_dim: 64,
    rope_theta: 150000,
    max_position_embeddings: 131072,
    rope_scaling: {
      beta_fast: 32,
      beta_slow: 1,
      factor: 32,
      original_max_position_embeddings: 4096,
      rope_type: 'yarn',
      truncate: false,
    },
  },
  // lmsys/vicuna-7b-v1.5-16k: tests/fixtures/rotary/hf-vicuna-7b-v1.5-16k-linear.json
  'vicuna-7b-v1.5-16k': {
    model_type: 'llama',
    hidden_size: 4096,
    num_attention_heads: 32,
    max_position_embeddings: 4096,
    rope_scaling: {
      factor: 4,
      type: 'linear',
    },
  },
  // EleutherAI/gpt-neox-20b: tests/fixtures/rotary/hf-gpt-neox-20b.json
  'gpt-neox-20b': {
    model_type: 'gpt_neox',
    hidden_size: 6144,
    num_attention_heads: 64,
    rotary_pct: 0.25,
    rotary_emb_base: 10000,
    max_position_embeddings: 2048,
  },
  // EleutherAI/gpt-j-6B: tests/fixtures/rotary/hf-gpt-j-6b.json
  'gpt-j-6b': {
    model_type: 'gptj',
    n_embd: 4096,
    n_head: 16,
    rotary_dim: 64,
    n_positions: 2048,
  },
});
