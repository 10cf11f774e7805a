// Reading Hugging Face config.json texts of real models into a RotarySpec, and every bad spec,
// config or argument: an error that names it.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "posenc/posenc.hpp"
#include "test_rotary_util.hpp"

using namespace posenc;
using namespace rotary_test;

namespace {

RotarySpec read(const std::string& json) {
  RotarySpec spec;
  const EncodingError e = rotary_spec_from_hf_config(json.data(), json.size(), &spec);
  INFO(json << "\n-> " << e.message);
  REQUIRE(e.ok());
  return spec;
}

EncodingError read_error(const std::string& json) {
  RotarySpec spec;
  spec.head_dim = 7;
  const EncodingError e = rotary_spec_from_hf_config(json.data(), json.size(), &spec);
  CHECK(spec.head_dim == 7);  // untouched on error
  return e;
}

}  // namespace

TEST_CASE("HF configs of real models", "[rotary][config]") {
  // meta-llama/Llama-2-7b-hf
  RotarySpec s = read(
      R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":32,"num_key_value_heads":32,
          "max_position_embeddings":4096,"rope_theta":10000.0,"rope_scaling":null})");
  CHECK(s.head_dim == 128);
  CHECK(s.rotary_dim == 128);
  CHECK(s.base == 10000.0);
  CHECK(s.layout == RotaryLayout::half);
  CHECK(s.scaling.type == RopeScalingType::none);
  CHECK(s.arithmetic == FrequencyArithmetic::hf_float32);
  // meta-llama/Llama-3.1-8B
  s = read(R"({"model_type":"llama","hidden_size":4096,"num_attention_heads":32,
      "max_position_embeddings":131072,"rope_theta":500000.0,"rope_scaling":{"factor":8.0,
      "low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192,
      "rope_type":"llama3"}})");
  CHECK(s.base == 500000.0);
  CHECK(s.scaling.type == RopeScalingType::llama3);
  CHECK(s.scaling.factor == 8.0);
  CHECK(s.scaling.original_max_positions == 8192);
  CHECK(s.scaling.high_freq_factor == 4.0);
  // Qwen/Qwen2-7B
  s = read(R"({"model_type":"qwen2","hidden_size":3584,"num_attention_heads":28,
      "max_position_embeddings":131072,"rope_theta":1000000.0})");
  CHECK(s.head_dim == 128);
  CHECK(s.base == 1e6);
  // mistralai/Mistral-Nemo-Base-2407: head_dim 128, not 5120 / 32 = 160
  s = read(R"({"model_type":"mistral","hidden_size":5120,"num_attention_heads":32,"head_dim":128,
      "rope_theta":1000000.0,"max_position_embeddings":1024000})");
  CHECK(s.head_dim == 128);
  CHECK(s.rotary_dim == 128);
  // mistralai/Mistral-7B-v0.1 (head_dim null in some exports)
  s = read(R"({"model_type":"mistral","hidden_size":4096,"num_attention_heads":32,"head_dim":null,
      "rope_theta":10000.0})");
  CHECK(s.head_dim == 128);
  // EleutherAI/gpt-neox-20b: rotary_emb_base, rotary_pct
  s = read(R"({"model_type":"gpt_neox","hidden_size":6144,"num_attention_heads":64,
      "rotary_emb_base":10000,"rotary_pct":0.25,"max_position_embeddings":2048})");
  CHECK(s.head_dim == 96);
  CHECK(s.rotary_dim == 24);
  CHECK(s.layout == RotaryLayout::half);
  // GPT-NeoX without rotary_pct: GPTNeoXConfig's default 0.25
  s = read(R"({"model_type":"gpt_neox","hidden_size":512,"num_attention_heads":8})");
  CHECK(s.rotary_dim == 16);
  // EleutherAI/gpt-j-6b: n_embd, n_head, rotary_dim, interleaved
  s = read(R"({"model_type":"gptj","n_embd":4096,"n_head":16,"rotary_dim":64,"n_positions":2048})");
  CHECK(s.head_dim == 256);
  CHECK(s.rotary_dim == 64);
  CHECK(s.layout == RotaryLayout::interleaved);
  // microsoft/Phi-3-mini-128k-instruct: longrope, top-level original_max_position_embeddings
  const std::string shorts = numbers(48, 1.0, 0.01), longs = numbers(48, 1.1, 1.0);
  s = read(R"({"model_type":"phi3","hidden_size":3072,"num_attention_heads":32,
      "max_position_embeddings":131072,"original_max_position_embeddings":4096,"rope_theta":10000.0,
      "rope_scaling":{"type":"longrope","short_factor":)" +
           shorts + R"(,"long_factor":)" + longs + "}}");
  CHECK(s.head_dim == 96);
  CHECK(s.scaling.type == RopeScalingType::longrope);
  CHECK(s.scaling.original_max_positions == 4096);
  CHECK(s.scaling.factor == 32.0);
  CHECK(s.scaling.short_factor.size() == 48);
  CHECK(s.scaling.long_factor[47] == Approx(48.1));
  RotaryEmbedding rot;
  REQUIRE(rot.init(s).ok());
  CHECK(rot.attention_scaling() == Approx(std::sqrt(1 + std::log(32.0) / std::log(4096.0))));
  // Phi-4-mini style partial_rotary_factor
  s = read(R"({"hidden_size":3072,"num_attention_heads":24,"partial_rotary_factor":0.75})");
  CHECK(s.rotary_dim == 96);
  // yarn (Qwen2.5 long-context recipe) and its defaults
  s = read(R"({"hidden_size":5120,"num_attention_heads":40,"max_position_embeddings":131072,
      "rope_theta":1000000.0,"rope_scaling":{"type":"yarn","factor":4.0,
      "original_max_position_embeddings":32768}})");
  CHECK(s.scaling.type == RopeScalingType::yarn);
  CHECK(s.scaling.beta_fast == 32);
  CHECK(s.scaling.beta_slow == 1);
  CHECK(s.scaling.truncate);
  CHECK(s.scaling.original_max_positions == 32768);
  s = read(R"({"hidden_size":64,"num_attention_heads":2,"max_position_embeddings":4096,
      "rope_scaling":{"rope_type":"yarn","factor":2,"beta_fast":0,"truncate":false}})");
  CHECK(s.scaling.beta_fast == 32);  // HF: `or 32`
  CHECK_FALSE(s.scaling.truncate);
  CHECK(s.scaling.original_max_positions == 4096);
  // dynamic and linear
  s = read(R"({"hidden_size":4096,"num_attention_heads":32,"max_position_embeddings":4096,
      "rope_scaling":{"type":"dynamic","factor":2.0}})");
  CHECK(s.scaling.type == RopeScalingType::dynamic);
  CHECK(s.scaling.original_max_positions == 4096);
  s = read(R"({"hidden_size":4096,"num_attention_heads":32,
      "rope_scaling":{"rope_type":"linear","factor":4}})");
  CHECK(s.scaling.type == RopeScalingType::linear);
  CHECK(s.scaling.factor == 4.0);
  // rope_scaling text alone (safetensors metadata)
  RopeScaling rs;
  const std::string text = R"({"rope_type":"llama3","factor":8,"low_freq_factor":1,
      "high_freq_factor":4,"original_max_position_embeddings":8192})";
  REQUIRE(rope_scaling_from_json(text.data(), text.size(), 131072, &rs).ok());
  CHECK(rs.type == RopeScalingType::llama3);
}

TEST_CASE("HF config errors name the key", "[rotary][config][bad]") {
  struct Bad {
    const char* json;
    const char* argument;
  };
  const Bad cases[] = {
      {"{", "config"},
      {"[1,2]", "config"},
      {R"({"num_attention_heads":32})", "config.head_dim"},
      {R"({"hidden_size":"4096","num_attention_heads":32})", "config.hidden_size"},
      {R"({"hidden_size":4096.5,"num_attention_heads":32})", "config.hidden_size"},
      {R"({"head_dim":1})", "config.head_dim"},
      {R"({"head_dim":128,"rope_theta":1})", "config.rope_theta"},
      {R"({"head_dim":128,"rope_theta":-5})", "config.rope_theta"},
      {R"({"head_dim":128,"rope_theta":1e999})", "config.rope_theta"},
      {R"({"head_dim":128,"partial_rotary_factor":0})", "config.partial_rotary_factor"},
      {R"({"head_dim":128,"partial_rotary_factor":1.5})", "config.partial_rotary_factor"},
      {R"({"head_dim":10,"partial_rotary_factor":0.5})", "config.partial_rotary_factor"},
      {R"({"head_dim":128,"rotary_dim":129})", "config.rotary_dim"},
      {R"({"head_dim":128,"rope_scaling":5})", "config.rope_scaling"},
      {R"({"head_dim":128,"rope_scaling":{"factor":2}})", "config.rope_scaling.rope_type"},
      {R"({"head_dim":128,"rope_scaling":{"type":"ntk","factor":2}})", "config.rope_scaling.type"},
      {R"({"head_dim":128,"rope_scaling":{"type":"linear"}})", "config.rope_scaling.factor"},
      {R"({"head_dim":128,"rope_scaling":{"type":"linear","factor":0.5}})",
       "config.rope_scaling.factor"},
      {R"({"head_dim":128,"rope_scaling":{"type":"linear","factor":"2"}})",
       "config.rope_scaling.factor"},
      {R"({"head_dim":128,"rope_scaling":{"type":"dynamic","factor":2}})",
       "config.max_position_embeddings"},
      {R"({"head_dim":128,"rope_scaling":{"rope_type":"llama3","factor":8,"low_freq_factor":1,
         "high_freq_factor":4}})",
       "config.rope_scaling.original_max_position_embeddings"},
      {R"({"head_dim":128,"rope_scaling":{"rope_type":"llama3","factor":8,"low_freq_factor":4,
         "high_freq_factor":1,"original_max_position_embeddings":8192}})",
       "config.rope_scaling.high_freq_factor"},
      {R"({"head_dim":128,"max_position_embeddings":4096,"rope_scaling":{"type":"yarn",
         "factor":2,"truncate":1}})",
       "config.rope_scaling.truncate"},
      {R"({"head_dim":128,"max_position_embeddings":4096,"rope_scaling":{"type":"yarn",
         "factor":2,"attention_factor":-1}})",
       "config.rope_scaling.attention_factor"},
      {R"({"head_dim":8,"max_position_embeddings":4096,"rope_scaling":{"type":"longrope",
         "short_factor":[1,1,1],"long_factor":[1,1,1,1]}})",
       "config.rope_scaling.short_factor"},
      {R"({"head_dim":8,"max_position_embeddings":4096,"rope_scaling":{"type":"longrope",
         "short_factor":[1,1,1,1],"long_factor":[1,1,0,1]}})",
       "config.rope_scaling.long_factor[2]"},
      {R"({"head_dim":8,"max_position_embeddings":4096,"rope_scaling":{"type":"longrope",
         "short_factor":[1,1,1,1],"long_factor":[1,1,"x",1]}})",
       "config.rope_scaling.long_factor[2]"},
      {R"({"head_dim":8,"max_position_embeddings":4096,"original_max_position_embeddings":0})",
       "config.original_max_position_embeddings"},
  };
  for (const Bad& b : cases) {
    const EncodingError e = read_error(b.json);
    INFO(b.json << " -> " << e.message);
    CHECK_FALSE(e.ok());
    CHECK(e.argument == b.argument);
    CHECK(e.message.rfind(b.argument, 0) == 0);  // the message starts with the name
  }
}

TEST_CASE("rotary option and argument errors name the argument", "[rotary][bad]") {
  auto spec_error = [](RotarySpec s) { return validate(s).argument; };
  RotarySpec ok;
  ok.head_dim = 64;
  CHECK(validate(ok).ok());
  RotarySpec s = ok;
  s.head_dim = 1;
  CHECK(spec_error(s) == "headDim");
  s.head_dim = 65537;
  CHECK(spec_error(s) == "headDim");
  s = ok;
  s.rotary_dim = 7;
  CHECK(spec_error(s) == "rotaryDim");
  s.rotary_dim = 66;
  CHECK(spec_error(s) == "rotaryDim");
  s = ok;
  s.base = 1.0;
  CHECK(spec_error(s) == "base");
  s.base = std::nan("");
  CHECK(spec_error(s) == "base");
  s = ok;
  s.layout = static_cast<RotaryLayout>(9);
  CHECK(spec_error(s) == "layout");
  s = ok;
  s.scaling.type = static_cast<RopeScalingType>(17);
  CHECK(spec_error(s) == "scaling.type");
  s = ok;
  s.scaling.type = RopeScalingType::yarn;
  s.scaling.factor = 0.5;
  CHECK(spec_error(s) == "scaling.factor");
  CHECK(validate(s, ArgumentNames::hf_config).argument == "config.rope_scaling.factor");
  s.scaling.factor = 2;
  CHECK(spec_error(s) == "scaling.originalMaxPositions");
  s.scaling.original_max_positions = 4096;
  s.scaling.beta_slow = -1;
  CHECK(spec_error(s) == "scaling.betaSlow");
  s = ok;
  s.scaling.type = RopeScalingType::longrope;
  s.scaling.original_max_positions = 4096;
  s.scaling.short_factor.assign(32, 1.0);
  s.scaling.long_factor.assign(31, 1.0);
  CHECK(spec_error(s) == "scaling.longFactor");

  RotaryEmbedding rot;
  RotaryRows rows;
  rows.count = 1;
  std::vector<float> x(64 * 2), c(64), si(64);
  CHECK(rot.apply(rows, 1, x.data(), 64).argument == "rotary");  // not initialised
  REQUIRE(rot.init(ok).ok());
  CHECK(rot.apply(rows, 1, x.data(), 64).ok());
  CHECK(rot.apply(rows, 0, x.data(), 64).argument == "heads");
  CHECK(rot.apply(rows, 1, x.data(), 63).argument == "x");
  CHECK(rot.apply(rows, 1, nullptr, 64).argument == "x");
  CHECK(rot.cos_sin(rows, c.data(), si.data(), 64, 63).argument == "sin");
  CHECK(rot.cos_sin(rows, c.data(), si.data(), 65, 64).argument == "cos");
  rows.count = 0;
  CHECK(rot.apply(rows, 1, x.data(), 0).argument == "length");
  rows.count = 1;
  rows.first_position = -1;
  CHECK(rot.apply(rows, 1, x.data(), 64).argument == "offset");
  CHECK(rot.apply(rows, 1, x.data(), 64).status == EncodingStatus::invalid_position);
  rows.first_position = 2147483647.0;
  rows.count = 2;
  CHECK(rot.apply(rows, 1, x.data(), 128).argument == "offset + length - 1");
  const double bad[] = {3.0, std::nan("")};
  rows.positions = bad;
  rows.first_position = 0;
  CHECK(rot.apply(rows, 1, x.data(), 128).argument == "positions[1]");
  const double good[] = {3.0, 1.0};
  rows.positions = good;
  rows.sequence_length = -2;
  CHECK(rot.apply(rows, 1, x.data(), 128).argument == "sequenceLength");
  // Nothing was written by the failed calls.
  for (float v : x)
    CHECK(v == 0.0f);
}
