// The native benchmarks' timer: one warm-up call (which builds tables and touches the pages), then
// the median of `runs` timed calls, in seconds.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

inline double median_seconds(int runs, const std::function<void()>& f) {
  std::vector<double> t;
  f();
  for (int i = 0; i < runs; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
