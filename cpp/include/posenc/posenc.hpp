// posenc: sinusoidal positional encodings of Transformers, exact to float32 rounding.
// The whole public C++ API: include this header and link the posenc library.
#pragma once

#include "posenc/encode.hpp"
#include "posenc/encoder.hpp"
#include "posenc/presets.hpp"
#include "posenc/spec.hpp"
#include "posenc/status.hpp"
