// The worker pool (posenc/parallel/thread_pool.hpp) and the calls that split rows between its
// threads: every index covered once, chunk boundaries aligned, nesting inline, and every result
// the same bits as on one thread.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "posenc/nn/transformer_layer.hpp"
#include "posenc/parallel/thread_pool.hpp"
#include "posenc/posenc.hpp"
#include "posenc/rotary/rotary.hpp"
#include "test_layer_util.hpp"

using namespace posenc;

namespace {

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("thread pool: every index once, aligned chunks, nested calls inline, resizing",
          "[threads]") {
  ThreadPool pool;
  REQUIRE(pool.threads() == 1);
  REQUIRE_FALSE(pool.resize(0));
  REQUIRE_FALSE(pool.resize(ThreadPool::kMaxThreads + 1));
  for (int threads : {4, 2, 3, 1, 16}) {
    REQUIRE(pool.resize(threads));
    REQUIRE(pool.threads() == threads);
    for (std::int64_t n : {1, 7, 64, 1000, 4097}) {
      for (std::int64_t align : {1, 8, 128}) {
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        std::atomic<int> misaligned{0}, nested_outside{0};
        auto body = [&](std::int64_t begin, std::int64_t end) {
          if (begin % align != 0) ++misaligned;
          for (std::int64_t i = begin; i < end; ++i)
            ++hits[static_cast<std::size_t>(i)];
          // A call from inside a body runs on this thread, at once.
          std::int64_t inner = 0;
          auto count = [&](std::int64_t b, std::int64_t e) { inner += e - b; };
          pool.for_each(100, 1, 1, count);
          if (inner != 100) ++nested_outside;
        };
        pool.for_each(n, 4, align, body);
        for (auto& h : hits)
          REQUIRE(h.load() == 1);
        REQUIRE(misaligned.load() == 0);
        REQUIRE(nested_outside.load() == 0);
      }
    }
  }
  // Many small jobs in a row (workers still leaving one job while the next starts).
  REQUIRE(pool.resize(4));
  std::int64_t total = 0;
  for (int job = 0; job < 2000; ++job) {
    std::atomic<std::int64_t> sum{0};
    auto body = [&](std::int64_t b, std::int64_t e) { sum += e - b; };
    pool.for_each(64, 2, 1, body);
    total += sum.load();
  }
  REQUIRE(total == 2000 * 64);
}

TEST_CASE("encode, add_to and concat give the same bits with 1, 2 and 5 threads", "[threads]") {
  std::mt19937 rng(2026);
  ThreadPool pool;
  for (std::int64_t dim : {6, 64, 255, 512, 1024}) {
    std::vector<Spec> specs;
    Spec paper;
    paper.dim = dim;
    specs.push_back(paper);
    specs.push_back(preset_spec(Preset::fairseq, dim));
    specs.push_back(preset_spec(Preset::tf_tutorial, dim));
    for (const Spec& spec : specs) {
      const SinusoidalEncoder encoder(spec);
      if (encoder.status() != Status::ok) continue;
      const std::int64_t count = 3000 + static_cast<std::int64_t>(rng() % 200);
      std::vector<double> positions(static_cast<std::size_t>(count));
      std::uniform_real_distribution<double> any(0, 1e6);
      for (double& p : positions)
        p = std::floor(any(rng));
      std::vector<std::uint8_t> zero_rows(static_cast<std::size_t>(count));
      for (auto& z : zero_rows)
        z = rng() % 7 == 0;
      std::vector<RowPositions> cases(4);
      cases[0].count = count;  // consecutive from 0
      cases[1].count = count;  // consecutive from an offset inside a block
      cases[1].first_position = 12345;
      cases[2].count = count;  // explicit positions, some rows zero
      cases[2].positions = positions.data();
      cases[2].zero_rows = zero_rows.data();
      cases[3].count = count;  // a fractional offset: not split, same result
      cases[3].first_position = 0.25;
      const std::size_t len = static_cast<std::size_t>(count * dim);
      std::vector<float> embeddings(len);
      std::uniform_real_distribution<float> value(-2, 2);
      for (float& x : embeddings)
        x = value(rng);
      for (const RowPositions& rows : cases) {
        std::vector<float> one(len), added = embeddings;
        std::vector<float> joined(static_cast<std::size_t>(count * (dim + 3)));
        std::vector<float> small(static_cast<std::size_t>(count * 3), 0.5f);
        REQUIRE(encoder.encode(rows, one.data(), len) == Status::ok);
        REQUIRE(encoder.add_to(rows, 1.5f, added.data(), len) == Status::ok);
        REQUIRE(encoder.concat(rows, small.data(), small.size(), 3, joined.data(), joined.size()) ==
                Status::ok);
        for (int threads : {2, 5}) {
          REQUIRE(pool.resize(threads));
          std::vector<float> many(len), added_many = embeddings;
          std::vector<float> joined_many(joined.size());
          REQUIRE(encoder.encode(rows, many.data(), len, nullptr, &pool) == Status::ok);
          REQUIRE(encoder.add_to(rows, 1.5f, added_many.data(), len, nullptr, &pool) == Status::ok);
          REQUIRE(encoder.concat(rows, small.data(), small.size(), 3, joined_many.data(),
                                 joined_many.size(), nullptr, &pool) == Status::ok);
          // Started, then finished later (the pipelined form the bindings use).
          std::vector<float> later(len);
          PendingRows pending;
          REQUIRE(encoder.encode(rows, later.data(), len, nullptr, &pool, &pending) == Status::ok);
          REQUIRE(SinusoidalEncoder::finish(&pool, pending) == Status::ok);
          INFO("dim " << dim << ", threads " << threads << ", first " << rows.first_position);
          REQUIRE(same_bits(one, many));
          REQUIRE(same_bits(one, later));
          REQUIRE(same_bits(added, added_many));
          REQUIRE(same_bits(joined, joined_many));
        }
        pool.resize(1);
      }
    }
  }
}

TEST_CASE("the encoder layer gives the same bits with 1 and 3 threads", "[threads]") {
  ThreadPool pool;
  REQUIRE(pool.resize(3));
  for (PositionMethod method :
       {PositionMethod::none, PositionMethod::rotary, PositionMethod::alibi}) {
    for (bool causal : {false, true}) {
      for (bool norm_first : {false, true}) {
        LayerConfig config;
        config.d_model = 64;
        config.heads = 4;
        config.ff_dim = 128;
        config.norm_first = norm_first;
        config.position.method = method;
        TransformerEncoderLayer layer;
        REQUIRE(layer.configure(config).ok());
        for (const auto& t : layer_test::layer_state(3, config.d_model, config.ff_dim))
          REQUIRE(layer.set_tensor(t.name, t.values.data(), t.values.size()).ok());
        const std::int64_t length = 300;
        const auto x = layer_test::layer_input(4, length, config.d_model);
        std::vector<std::uint8_t> mask(static_cast<std::size_t>(length), 0);
        for (std::size_t i = 0; i < mask.size(); i += 7)
          mask[i] = 1;
        ForwardOptions options;
        options.causal = causal;
        options.key_padding_mask = mask.data();
        std::vector<float> one(x.size()), many(x.size());
        REQUIRE(layer.forward(x.data(), x.size(), length, options, one.data(), one.size()).ok());
        options.pool = &pool;
        REQUIRE(layer.forward(x.data(), x.size(), length, options, many.data(), many.size()).ok());
        INFO("method " << static_cast<int>(method) << ", causal " << causal);
        REQUIRE(same_bits(one, many));
      }
    }
  }
}

namespace {

// n values uniform in [-1, 1) from rng.
std::vector<float> random_floats(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-1, 1);
  std::vector<float> x(n);
  for (float& v : x)
    v = value(rng);
  return x;
}

// [count, heads, hd] <-> [heads, count, hd].
std::vector<float> swap_rows_heads(const std::vector<float>& x, std::int64_t count,
                                   std::int64_t heads, std::int64_t hd) {
  std::vector<float> y(x.size());
  for (std::int64_t r = 0; r < count; ++r)
    for (std::int64_t h = 0; h < heads; ++h)
      std::memcpy(&y[static_cast<std::size_t>((h * count + r) * hd)],
                  &x[static_cast<std::size_t>((r * heads + h) * hd)],
                  static_cast<std::size_t>(hd) * sizeof(float));
  return y;
}

}  // namespace

TEST_CASE("RoPE apply and cos_sin give the same bits with 1 and 3 threads", "[threads]") {
  ThreadPool pool;
  REQUIRE(pool.resize(3));
  std::mt19937 rng(7);
  for (RotaryLayout layout :
       {RotaryLayout::half, RotaryLayout::interleaved, RotaryLayout::deinterleave}) {
    for (RopeScalingType type : {RopeScalingType::none, RopeScalingType::yarn}) {
      RotarySpec spec;
      spec.head_dim = 128;
      spec.rotary_dim = 96;
      spec.layout = layout;
      spec.scaling.type = type;
      if (type == RopeScalingType::yarn) {
        spec.scaling.factor = 4;
        spec.scaling.original_max_positions = 4096;
      }
      RotaryEmbedding rot;
      REQUIRE(rot.init(spec).ok());
      const std::int64_t count = 3000, heads = 4, rd = 96;
      std::vector<double> positions(static_cast<std::size_t>(count));
      for (double& p : positions)
        p = static_cast<double>(rng() % 100000);
      std::vector<RotaryRows> cases(3);
      cases[0].count = count;
      cases[1].count = count;
      cases[1].first_position = 777;
      cases[2].count = count;
      cases[2].positions = positions.data();
      for (const RotaryRows& rows : cases) {
        const std::size_t len = static_cast<std::size_t>(count * heads * 128);
        const std::vector<float> x = random_floats(len, rng);
        std::vector<float> one = x, many = x;
        REQUIRE(rot.apply(rows, heads, one.data(), len).ok());
        REQUIRE(rot.apply(rows, heads, many.data(), len, nullptr, &pool).ok());
        // heads_first ([heads, count, hd], HF's order as it is): each head's rows as the
        // [count, heads, hd] order rotates them, on 1 and 3 threads.
        std::vector<float> first1 = swap_rows_heads(x, count, heads, 128), first3 = first1;
        REQUIRE(rot.apply(rows, heads, first1.data(), len, nullptr, nullptr, true).ok());
        REQUIRE(rot.apply(rows, heads, first3.data(), len, nullptr, &pool, true).ok());
        REQUIRE(same_bits(swap_rows_heads(first1, heads, count, 128), one));
        REQUIRE(same_bits(swap_rows_heads(first3, heads, count, 128), one));
        const std::size_t n = static_cast<std::size_t>(count * rd);
        std::vector<float> c1(n), s1(n), c3(n), s3(n);
        REQUIRE(rot.cos_sin(rows, c1.data(), s1.data(), n, n).ok());
        REQUIRE(rot.cos_sin(rows, c3.data(), s3.data(), n, n, nullptr, &pool).ok());
        INFO("layout " << static_cast<int>(layout) << ", first " << rows.first_position);
        REQUIRE(same_bits(one, many));
        REQUIRE(same_bits(c1, c3));
        REQUIRE(same_bits(s1, s3));
      }
    }
  }
}

TEST_CASE("RoPE apply and cos_sin left pending: the same bits once finished", "[threads]") {
  ThreadPool pool;
  REQUIRE(pool.resize(2));
  RotarySpec spec;
  spec.head_dim = 64;
  // dynamic beyond its original context: the call makes a frequency set of its own, which the
  // pending call keeps until finish
  spec.scaling.type = RopeScalingType::dynamic;
  spec.scaling.factor = 2;
  spec.scaling.original_max_positions = 1024;
  RotaryEmbedding rot;
  REQUIRE(rot.init(spec).ok());
  const std::int64_t heads = 8;
  std::mt19937 rng(11);
  RotaryEmbedding::Pending pending;
  REQUIRE(RotaryEmbedding::finish(pending).ok());  // nothing running: returns at once
  for (const std::int64_t count : {std::int64_t{4000}, std::int64_t{3}}) {  // split, and not
    RotaryRows rows;
    rows.count = count;
    rows.first_position = 500;
    const std::size_t len = static_cast<std::size_t>(count * heads * 64);
    const std::vector<float> x = random_floats(len, rng);
    std::vector<float> one = x, started = x;
    REQUIRE(rot.apply(rows, heads, one.data(), len).ok());
    REQUIRE(rot.apply(rows, heads, started.data(), len, nullptr, &pool, false, &pending).ok());
    REQUIRE(RotaryEmbedding::finish(pending).ok());
    REQUIRE(same_bits(one, started));
    const std::size_t n = static_cast<std::size_t>(count * 64);
    std::vector<float> c1(n), s1(n), c2(n), s2(n);
    REQUIRE(rot.cos_sin(rows, c1.data(), s1.data(), n, n).ok());
    REQUIRE(rot.cos_sin(rows, c2.data(), s2.data(), n, n, nullptr, &pool, &pending).ok());
    REQUIRE(RotaryEmbedding::finish(pending).ok());
    REQUIRE(same_bits(c1, c2));
    REQUIRE(same_bits(s1, s2));
    // A call whose arguments fail returns their error and leaves nothing running.
    REQUIRE_FALSE(rot.cos_sin(rows, c2.data(), s2.data(), n - 1, n, nullptr, &pool, &pending).ok());
    REQUIRE(RotaryEmbedding::finish(pending).ok());
  }
}

TEST_CASE("multimodal RoPE (t, h, w rows) splits with the same bits on 3 threads", "[threads]") {
  ThreadPool pool;
  REQUIRE(pool.resize(3));
  for (const bool interleaved : {false, true}) {
    RotarySpec spec;
    spec.head_dim = 128;
    spec.base = 1000000;
    spec.mrope_section = {16, 24, 24};
    spec.mrope_interleaved = interleaved;
    RotaryEmbedding rot;
    REQUIRE(rot.init(spec).ok());
    const std::int64_t count = 3000, heads = 4;
    // t, h, w rows: text positions, then an image grid, then wide jumps (explicit rows)
    std::vector<double> three(static_cast<std::size_t>(3 * count));
    for (std::int64_t r = 0; r < count; ++r) {
      const bool image = r >= 1000 && r < 2000;
      three[r] = image ? 1000 : static_cast<double>(r < 1000 ? r : r * 37 % 90001);
      three[count + r] = image ? 1000 + (r - 1000) / 25 : three[r];
      three[2 * count + r] = image ? 1000 + (r - 1000) % 25 : three[r];
    }
    RotaryRows rows;
    rows.count = count;
    rows.mrope_positions = three.data();
    std::mt19937 rng(5);
    const std::size_t len = static_cast<std::size_t>(count * heads * 128);
    const std::vector<float> x = random_floats(len, rng);
    std::vector<float> one = x, many = x;
    REQUIRE(rot.apply(rows, heads, one.data(), len).ok());
    REQUIRE(rot.apply(rows, heads, many.data(), len, nullptr, &pool).ok());
    REQUIRE(same_bits(one, many));
    std::vector<float> first1 = swap_rows_heads(x, count, heads, 128), first3 = first1;
    REQUIRE(rot.apply(rows, heads, first3.data(), len, nullptr, &pool, true).ok());
    REQUIRE(same_bits(swap_rows_heads(first3, heads, count, 128), one));
    const std::size_t n = static_cast<std::size_t>(count * 128);
    std::vector<float> c1(n), s1(n), c3(n), s3(n);
    REQUIRE(rot.cos_sin(rows, c1.data(), s1.data(), n, n).ok());
    REQUIRE(rot.cos_sin(rows, c3.data(), s3.data(), n, n, nullptr, &pool).ok());
    INFO("interleaved " << interleaved);
    REQUIRE(same_bits(c1, c3));
    REQUIRE(same_bits(s1, s3));
  }
}

TEST_CASE("RoPE apply_half: each share converts its own rows, the same bits on 3 threads",
          "[threads]") {
  ThreadPool pool;
  REQUIRE(pool.resize(3));
  RotarySpec spec;
  spec.head_dim = 64;
  spec.layout = RotaryLayout::interleaved;
  RotaryEmbedding rot;
  REQUIRE(rot.init(spec).ok());
  const std::int64_t count = 2500, heads = 6;
  const std::size_t len = static_cast<std::size_t>(count * heads * 64);
  for (const HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
    for (const bool heads_first : {false, true}) {
      RotaryRows rows;
      rows.count = count;
      rows.first_position = 40;
      // 16-bit values (in float vectors: the buffers of the earlier in-place widening)
      std::vector<float> one(len), many(len);
      auto* a = reinterpret_cast<std::uint16_t*>(one.data());
      auto* b = reinterpret_cast<std::uint16_t*>(many.data());
      for (std::size_t i = 0; i < len; ++i)
        a[i] = b[i] = static_cast<std::uint16_t>((i % 3 ? 0x3c00 : 0xb800) | (i * 7919) % 1024);
      REQUIRE(rot.apply_half(rows, heads, a, len, format, nullptr, nullptr, heads_first).ok());
      REQUIRE(rot.apply_half(rows, heads, b, len, format, nullptr, &pool, heads_first).ok());
      INFO("bf16 " << (format == HalfFormat::bfloat16) << ", heads first " << heads_first);
      REQUIRE(std::equal(a, a + len, b));
    }
  }
}

TEST_CASE("RoPE cos_sin_half splits with the same bits on 3 threads", "[threads]") {
  // Each share computes its rows in a buffer of its own and converts them into place; the bits of
  // one thread (where the tables are converted in place) in both formats, for consecutive and
  // explicit positions, both layouts, an attention scaling != 1 (YaRN: ties to even) and
  // multimodal rows.
  ThreadPool pool;
  REQUIRE(pool.resize(3));
  std::mt19937 rng(9);
  std::vector<double> positions(3000), three(3 * 3000);
  for (double& p : positions)
    p = static_cast<double>(rng() % 1000000);
  for (std::size_t r = 0; r < 3000; ++r) {
    three[r] = static_cast<double>(r);
    three[3000 + r] = static_cast<double>(r / 40);
    three[6000 + r] = static_cast<double>(r % 40);
  }
  for (int kind = 0; kind < 4; ++kind) {
    RotarySpec spec;
    spec.head_dim = 128;
    spec.layout = kind == 1 ? RotaryLayout::interleaved : RotaryLayout::half;
    if (kind == 2) {
      spec.scaling.type = RopeScalingType::yarn;
      spec.scaling.factor = 4;
      spec.scaling.original_max_positions = 4096;
    }
    if (kind == 3) spec.mrope_section = {16, 24, 24};
    RotaryEmbedding rot;
    REQUIRE(rot.init(spec).ok());
    std::vector<RotaryRows> cases(2);
    cases[0].count = 3000;
    cases[0].first_position = 5;
    cases[1].count = 3000;
    if (kind == 3)
      cases[1].mrope_positions = three.data();
    else
      cases[1].positions = positions.data();
    for (const RotaryRows& rows : cases) {
      for (const HalfFormat format : {HalfFormat::float16, HalfFormat::bfloat16}) {
        const std::size_t n = static_cast<std::size_t>(rows.count * 128);
        // room for n floats, the bits in the first n uint16
        std::vector<float> c1(n), s1(n), c3(n, 7.0f), s3(n, 7.0f);
        auto bits = [](std::vector<float>& v) {
          return reinterpret_cast<std::uint16_t*>(v.data());
        };
        REQUIRE(rot.cos_sin_half(rows, bits(c1), bits(s1), n, n, format).ok());
        REQUIRE(rot.cos_sin_half(rows, bits(c3), bits(s3), n, n, format, nullptr, &pool).ok());
        INFO("kind " << kind << ", format " << static_cast<int>(format));
        REQUIRE(std::memcmp(c1.data(), c3.data(), n * sizeof(std::uint16_t)) == 0);
        REQUIRE(std::memcmp(s1.data(), s3.data(), n * sizeof(std::uint16_t)) == 0);
      }
    }
  }
}
