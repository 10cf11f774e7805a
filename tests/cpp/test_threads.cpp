// The worker pool (posenc/parallel/thread_pool.hpp) and the calls that split rows between its
// threads: every index covered once, chunk boundaries aligned, nesting inline, and every result
// the same bits as on one thread.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <random>
#include <vector>

#include "posenc/parallel/thread_pool.hpp"
#include "posenc/posenc.hpp"

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
          INFO("dim " << dim << ", threads " << threads << ", first " << rows.first_position);
          REQUIRE(same_bits(one, many));
          REQUIRE(same_bits(added, added_many));
          REQUIRE(same_bits(joined, joined_many));
        }
        pool.resize(1);
      }
    }
  }
}
