// Real models' config.json for section 8's per-layer view and section 12 (multimodal position ids):
// only the keys the RoPE, attention and position-id rules read, copied from the fixtures
// tests/fixtures/rotary/models/<fixture>.json (each fixture names its source). Kept here, a few KB,
// rather than imported from the fixtures, which also hold every layer's expected tables (~90 KB each).
// tests/e2e/models.test.mjs checks that each one gives what its full fixture config gives.

/** Section 8: models whose decoder layers differ in RoPE or attention (Gemma 3 is shown first). */
export const LAYER_MODELS = [
  {
    name: 'Gemma 3 1B: sliding layers θ 10k, global θ 1M',
    fixture: 'gemma-3-1b-it',
    config: {
      head_dim: 256,
      max_position_embeddings: 32768,
      model_type: 'gemma3_text',
      num_hidden_layers: 26,
      rope_local_base_freq: 10000,
      rope_scaling: null,
      rope_theta: 1000000,
      sliding_window: 512,
      sliding_window_pattern: 6,
    },
  },
  {
    name: 'Llama 4 Scout: chunked RoPE layers, every 4th NoPE',
    fixture: 'llama4-scout-17b-16e',
    config: {
      model_type: 'llama4',
      text_config: {
        attention_chunk_size: 8192,
        attn_scale: 0.1,
        attn_temperature_tuning: 4,
        floor_scale: 8192,
        head_dim: 128,
        max_position_embeddings: 262144,
        model_type: 'llama4_text',
        no_rope_layers: [1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0],
        num_hidden_layers: 48,
        rope_scaling: { factor: 8, high_freq_factor: 4, low_freq_factor: 1, original_max_position_embeddings: 8192, rope_type: 'llama3' },
        rope_theta: 500000,
      },
    },
  },
  {
    name: 'Command R7B (Cohere2): RoPE on sliding layers only',
    fixture: 'c4ai-command-r7b-12-2024',
    config: {
      head_dim: 128,
      max_position_embeddings: 8192,
      model_type: 'cohere2',
      num_hidden_layers: 32,
      order_of_interleaved_layers: 'local_attn_first',
      position_embedding_type: 'rope_gptj',
      rope_scaling: null,
      rope_theta: 50000,
      rotary_pct: 1,
      sliding_window: 4096,
      sliding_window_pattern: 4,
    },
  },
  {
    name: 'SmolLM3-3B: every 4th layer NoPE',
    fixture: 'smollm3-3b',
    config: {
      hidden_size: 2048,
      max_position_embeddings: 65536,
      model_type: 'smollm3',
      no_rope_layer_interval: 4,
      no_rope_layers: [1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0],
      num_attention_heads: 16,
      num_hidden_layers: 36,
      rope_scaling: null,
      rope_theta: 5000000,
      sliding_window: null,
      use_sliding_window: false,
    },
  },
  {
    name: 'Qwen3-Coder-Next: linear-attention layers, RoPE every 4th',
    fixture: 'qwen3-coder-next',
    config: {
      full_attention_interval: 4,
      head_dim: 256,
      layer_types: [
        'linear_attention', 'linear_attention', 'linear_attention', 'full_attention', 'linear_attention', 'linear_attention',
        'linear_attention', 'full_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
        'linear_attention', 'linear_attention', 'linear_attention', 'full_attention', 'linear_attention', 'linear_attention',
        'linear_attention', 'full_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
        'linear_attention', 'linear_attention', 'linear_attention', 'full_attention', 'linear_attention', 'linear_attention',
        'linear_attention', 'full_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
        'linear_attention', 'linear_attention', 'linear_attention', 'full_attention', 'linear_attention', 'linear_attention',
        'linear_attention', 'full_attention', 'linear_attention', 'linear_attention', 'linear_attention', 'full_attention',
      ],
      max_position_embeddings: 262144,
      model_type: 'qwen3_next',
      num_hidden_layers: 48,
      partial_rotary_factor: 0.25,
      rope_scaling: null,
      rope_theta: 5000000,
    },
  },
  {
    name: 'gpt-oss-20b: sliding and full layers, one YaRN RoPE',
    fixture: 'gpt-oss-20b',
    config: {
      head_dim: 64,
      layer_types: [
        'sliding_attention', 'full_attention', 'sliding_attention', 'full_attention', 'sliding_attention', 'full_attention',
        'sliding_attention', 'full_attention', 'sliding_attention', 'full_attention', 'sliding_attention', 'full_attention',
        'sliding_attention', 'full_attention', 'sliding_attention', 'full_attention', 'sliding_attention', 'full_attention',
        'sliding_attention', 'full_attention', 'sliding_attention', 'full_attention', 'sliding_attention', 'full_attention',
      ],
      max_position_embeddings: 131072,
      model_type: 'gpt_oss',
      num_hidden_layers: 24,
      rope_scaling: { beta_fast: 32, beta_slow: 1, factor: 32, original_max_position_embeddings: 4096, rope_type: 'yarn', truncate: false },
      rope_theta: 150000,
      sliding_window: 128,
    },
  },
  {
    name: 'DeepSeek-V3: YaRN ×40 on the 64 RoPE dims of each head',
    fixture: 'deepseek-v3',
    config: {
      max_position_embeddings: 163840,
      model_type: 'deepseek_v3',
      num_hidden_layers: 61,
      qk_nope_head_dim: 128,
      qk_rope_head_dim: 64,
      rope_scaling: { beta_fast: 32, beta_slow: 1, factor: 40, mscale: 1, mscale_all_dim: 1, original_max_position_embeddings: 4096, type: 'yarn' },
      rope_theta: 10000,
      v_head_dim: 128,
    },
  },
  {
    name: 'GLM-4-9B: RoPE on half of each head, interleaved',
    fixture: 'glm-4-9b-chat-hf',
    config: {
      head_dim: 128,
      max_position_embeddings: 131072,
      model_type: 'glm',
      num_hidden_layers: 40,
      partial_rotary_factor: 0.5,
      rope_theta: 10000,
    },
  },
  {
    name: 'Qwen2.5-VL-7B: multimodal RoPE (t, h, w)',
    fixture: 'qwen2.5-vl-7b-instruct',
    config: qwen25Vl(),
  },
];

function qwen25Vl() {
  return {
    vision_start_token_id: 151652,
    vision_end_token_id: 151653,
    image_token_id: 151655,
    video_token_id: 151656,
    hidden_size: 3584,
    max_position_embeddings: 128000,
    max_window_layers: 28,
    model_type: 'qwen2_5_vl',
    num_attention_heads: 28,
    num_hidden_layers: 28,
    rope_theta: 1000000,
    sliding_window: 32768,
    use_sliding_window: false,
    vision_config: { spatial_merge_size: 2, tokens_per_second: 2 },
    rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] },
  };
}

/**
 * Section 12: the Qwen vision-language models whose position ids posenc/multimodal's ropeIndex
 * computes. Qwen2-VL is the README's example config plus Qwen2-VL-7B-Instruct's RoPE keys (its
 * config.json: rope_theta 1e6, mrope_section [16, 24, 24], 28 heads of 3584 / 28 = 128 dims).
 */
export const VL_MODELS = [
  {
    name: 'Qwen2-VL',
    config: {
      model_type: 'qwen2_vl',
      vision_start_token_id: 151652,
      vision_end_token_id: 151653,
      image_token_id: 151655,
      video_token_id: 151656,
      hidden_size: 3584,
      num_attention_heads: 28,
      rope_theta: 1000000,
      rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] },
      vision_config: { spatial_merge_size: 2 },
    },
  },
  { name: 'Qwen2.5-VL', fixture: 'qwen2.5-vl-7b-instruct', config: qwen25Vl() },
  {
    name: 'Qwen3-VL',
    fixture: 'qwen3-vl-8b-instruct',
    config: {
      image_token_id: 151655,
      model_type: 'qwen3_vl',
      text_config: {
        head_dim: 128,
        max_position_embeddings: 262144,
        model_type: 'qwen3_vl_text',
        num_hidden_layers: 36,
        rope_scaling: { mrope_interleaved: true, mrope_section: [24, 20, 20], rope_type: 'default' },
        rope_theta: 5000000,
      },
      video_token_id: 151656,
      vision_config: { spatial_merge_size: 2 },
      vision_end_token_id: 151653,
      vision_start_token_id: 151652,
    },
  },
];
