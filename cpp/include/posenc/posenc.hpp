// posenc: positional encodings of Transformers, exact to float32 rounding, and the small
// transformer that shows what they do. The whole public C++ API: include this header and link the
// posenc library (or include the header of one part: sinusoidal/, rotary/, alibi.hpp, sincos2d.hpp,
// nn/, io/).
#pragma once

#include "posenc/alibi.hpp"
#include "posenc/encoding_error.hpp"
#include "posenc/io/safetensors.hpp"
#include "posenc/nn/model.hpp"
#include "posenc/nn/transformer_layer.hpp"
#include "posenc/rotary/models.hpp"
#include "posenc/rotary/rotary.hpp"
#include "posenc/rotary/spec.hpp"
#include "posenc/sincos2d.hpp"
#include "posenc/sinusoidal/encode.hpp"
#include "posenc/sinusoidal/encoder.hpp"
#include "posenc/sinusoidal/presets.hpp"
#include "posenc/sinusoidal/spec.hpp"
#include "posenc/status.hpp"
