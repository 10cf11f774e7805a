// posenc: a pool of worker threads that splits a range of rows between them.
//
// Every function that takes a ThreadPool* computes each row (or column block) exactly as on one
// thread: the split changes which thread writes a row, never how it is computed, so results are
// the same bits with any number of threads (tested). nullptr or a pool of one thread runs the
// range on the calling thread.
//
// Built with POSENC_THREADS=1 (native builds, and the wasm build made with -pthread) the pool
// starts threads - 1 std::threads that wait on a condition variable (after a short spin, for the
// next job of a pipelined call); for_each_range wakes them,
// the calling thread takes its share of the chunks too and then waits for the last one (in a
// browser's main thread that wait spins, as every wait there does). Chunks are handed out from an
// atomic counter, so a worker that is slow to wake simply takes fewer of them: the call never
// waits for a thread to start. Without POSENC_THREADS the pool is a stub whose for_each_range is a
// plain call (the single-threaded wasm builds, at no size cost).
#pragma once

#include <cstdint>

#if POSENC_THREADS
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace posenc {

// Runs body(context, begin, end) for consecutive [begin, end) covering [0, n).
using RangeBody = void (*)(void* context, std::int64_t begin, std::int64_t end);

// The RangeBody of a callable f(begin, end) passed as its context.
template <class F>
void invoke_range(void* f, std::int64_t begin, std::int64_t end) {
  (*static_cast<F*>(f))(begin, end);
}

class ThreadPool {
 public:
  // False in the single-threaded builds, where every pool has one thread: callers test it to
  // compile their splitting code out.
#if POSENC_THREADS
  static constexpr bool kThreaded = true;
#else
  static constexpr bool kThreaded = false;
#endif
  // The most threads a pool runs, the caller's included.
  static constexpr int kMaxThreads = 16;

  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
#if POSENC_THREADS
  ~ThreadPool() {
    resize(1);
  }

  // Runs threads threads in all (1..kMaxThreads, the caller's included): starts or stops workers.
  // Returns false (and keeps one thread) if a thread could not be started or threads is out of
  // range. Not to be called from inside for_each_range.
  bool resize(int threads);
  int threads() const {
    return static_cast<int>(workers_.size()) + 1;
  }

  // Splits [0, n) into chunks of about grain items (the last ones may be shorter; boundaries are
  // multiples of align, align >= 1) and runs body on them across the threads; returns when every
  // chunk is done. Runs body(context, 0, n) on the caller when n < 2 * grain, when the pool has
  // one thread, or when called from inside a body (no nesting).
  void for_each_range(std::int64_t n, std::int64_t grain, std::int64_t align, RangeBody body,
                      void* context);

  // for_each_range in two steps: start_range hands the chunks to the workers and returns at once
  // (the caller can copy earlier results meanwhile), finish() takes the caller's share of what is
  // left and waits for the rest. A job start_range would run on the caller runs in finish(). The
  // pool runs nothing else in between; context must live until finish() returns. Not from inside
  // a body.
  void start_range(std::int64_t n, std::int64_t grain, std::int64_t align, RangeBody body,
                   void* context);
  void finish();
#else
  bool resize(int threads) {
    return threads == 1;
  }
  int threads() const {
    return 1;
  }
  void for_each_range(std::int64_t n, std::int64_t, std::int64_t, RangeBody body, void* context) {
    body(context, 0, n);
  }
  void start_range(std::int64_t n, std::int64_t, std::int64_t, RangeBody body, void* context) {
    body(context, 0, n);
  }
  void finish() {}
#endif

  // for_each_range over a callable f(begin, end).
  template <class F>
  void for_each(std::int64_t n, std::int64_t grain, std::int64_t align, F& f) {
    for_each_range(n, grain, align, &invoke_range<F>, &f);
  }

#if POSENC_THREADS
 private:
  void work(std::uint64_t seen);
  bool run_chunks();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::uint64_t generation_ = 0;  // under mutex_: bumped per job; stop_ asks workers to leave
  // generation_'s last value, for workers that spin on it before they sleep (work()).
  std::atomic<std::uint64_t> posted_{0};
  bool stop_ = false;
  // The current job, written before generation_ is bumped.
  RangeBody body_ = nullptr;
  void* context_ = nullptr;
  std::int64_t n_ = 0, chunk_ = 0, chunks_ = 0;
  std::atomic<std::int64_t> next_{0};  // the next chunk to take
  std::atomic<std::int64_t> done_{0};  // chunks finished
  std::atomic<int> busy_{0};           // workers inside the current job
  // A job start_range left to finish() (on the caller's thread; only the caller reads these).
  RangeBody inline_body_ = nullptr;
  void* inline_context_ = nullptr;
  std::int64_t inline_n_ = 0;
#endif
};

// Runs f(begin, end) over [0, n): split between pool's threads when pool is not null (as
// ThreadPool::for_each), else f(0, n) on this thread; the single-threaded builds compile only the
// plain call.
template <class F>
void for_each_range(ThreadPool* pool, std::int64_t n, std::int64_t grain, std::int64_t align,
                    F& f) {
  if (ThreadPool::kThreaded && pool != nullptr) {
    pool->for_each_range(n, grain, align, &invoke_range<F>, &f);
  } else {
    f(0, n);
  }
}

}  // namespace posenc
