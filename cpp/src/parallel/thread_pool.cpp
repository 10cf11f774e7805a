// The worker pool of posenc/parallel/thread_pool.hpp (built only with POSENC_THREADS).
#include "posenc/parallel/thread_pool.hpp"

#if POSENC_THREADS

#include <algorithm>

namespace posenc {
namespace {

// True on a thread while it runs a body: a for_each_range called from there runs inline.
thread_local bool inside_body = false;

// Loads of posted_ a worker makes before it sleeps on the condition variable: 50-110 us in wasm
// in Node 20. The pipelined calls post a job per chunk, back to back, and a worker woken from its
// sleep (a futex; Atomics.wait in wasm) starts late: spinning first took 2-9% off their time on
// 2 threads (an A/B in one process), and left the layer's unchanged.
constexpr int kSpinLoads = 1 << 16;

}  // namespace

bool ThreadPool::resize(int threads) {
  if (threads < 1 || threads > kMaxThreads) return false;
  if (threads == this->threads()) return true;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    posted_.store(++generation_, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_)
    t.join();
  workers_.clear();
  std::uint64_t seen;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
    seen = generation_;
  }
  for (int k = 1; k < threads; ++k) {
    std::thread t;
    // std::thread's constructor reports failure by throwing; the core is built without
    // exceptions, where a failed start aborts (Emscripten's pool workers are started beforehand).
    t = std::thread([this, seen] { work(seen); });
    workers_.push_back(std::move(t));
  }
  return true;
}

// Takes chunks until none is left; true if this thread finished the last one.
bool ThreadPool::run_chunks() {
  bool last = false;
  for (;;) {
    const std::int64_t k = next_.fetch_add(1, std::memory_order_relaxed);
    if (k >= chunks_) return last;
    const std::int64_t begin = k * chunk_, end = std::min(n_, begin + chunk_);
    inside_body = true;
    body_(context_, begin, end);
    inside_body = false;
    last = done_.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks_;
  }
}

void ThreadPool::work(std::uint64_t seen) {
  for (;;) {
    for (int i = 0; i < kSpinLoads && posted_.load(std::memory_order_acquire) == seen; ++i) {
    }
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (stop_) return;
      busy_.fetch_add(1, std::memory_order_acq_rel);
    }
    run_chunks();
    busy_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::for_each_range(std::int64_t n, std::int64_t grain, std::int64_t align,
                                RangeBody body, void* context) {
  if (inside_body) {  // a call from inside a body: on this thread, leaving the running job alone
    body(context, 0, n);
    return;
  }
  start_range(n, grain, align, body, context);
  finish();
}

void ThreadPool::start_range(std::int64_t n, std::int64_t grain, std::int64_t align, RangeBody body,
                             void* context) {
  grain = std::max<std::int64_t>(grain, 1);
  align = std::max<std::int64_t>(align, 1);
  // About four chunks per thread (a late or slow thread costs at most a chunk), each at least
  // grain items, rounded up to a multiple of align.
  const std::int64_t threads = this->threads();
  std::int64_t chunk = std::max(grain, (n + 4 * threads - 1) / (4 * threads));
  chunk = (chunk + align - 1) / align * align;
  if (workers_.empty() || n < 2 * grain || chunk >= n) {
    inline_body_ = body;
    inline_context_ = context;
    inline_n_ = n;
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // A worker still leaving the previous job (it found no chunk left) must not take one of this
    // job's with the old job's counters: wait until none is inside (it has nothing left to do).
    while (busy_.load(std::memory_order_acquire) != 0)
      std::this_thread::yield();
    body_ = body;
    context_ = context;
    n_ = n;
    chunk_ = chunk;
    chunks_ = (n + chunk - 1) / chunk;
    next_.store(0, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    posted_.store(++generation_, std::memory_order_release);
  }
  wake_.notify_all();
}

void ThreadPool::finish() {
  if (inline_body_ != nullptr) {
    const RangeBody body = inline_body_;
    inline_body_ = nullptr;
    // A body run here is inside a body too: a call from it runs inline, as from a worker's (it used
    // to start a pool job of its own, whose workers then ran the nested body concurrently).
    inside_body = true;
    body(inline_context_, 0, inline_n_);
    inside_body = false;
    return;
  }
  run_chunks();
  while (done_.load(std::memory_order_acquire) != chunks_)
    std::this_thread::yield();
  // Workers that woke late may still be about to read next_ (and find nothing): the next job waits
  // for them (start_range), so this call can return now.
}

}  // namespace posenc

#endif
