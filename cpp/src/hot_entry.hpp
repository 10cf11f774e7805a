// Internal: POSENC_HOT_ENTRY marks a -O3 function whose loops run per element and whose callers
// (the embind methods, compiled for size in the wasm) must call it rather than inline it: through
// link-time optimization an inlined SIMD loop would take the caller's -Oz and ran 10-30x slower
// (measured on the rotary rows).
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define POSENC_HOT_ENTRY __attribute__((noinline))
#else
#define POSENC_HOT_ENTRY
#endif
