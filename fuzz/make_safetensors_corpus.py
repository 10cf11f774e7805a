#!/usr/bin/env python3
# Writes the seed corpus of fuzz_safetensors (fuzz/corpus/safetensors/): small valid files in
# each dtype, small valid models (post-norm and pre-norm, with and without a positional
# encoding, with rotary and ALiBi steps), and a few malformed files; the fuzzer's regression inputs (regression_*) are left as
# they are. Plain Python (struct + json), no numpy or torch; the output is deterministic, so
# rerunning it leaves the committed corpus unchanged.
#   python3 fuzz/make_safetensors_corpus.py
import json
import math
import os
import shutil
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "safetensors")
TAGGER = os.path.join(HERE, "..", "tests", "fixtures", "model", "tagger.safetensors")


def values(seed, count, scale):
    """The LCG of tests/fixtures/layer/lcg.py: deterministic floats in [-scale, scale)."""
    state = (seed * 2654435761 + 12345) & 0xFFFFFFFF
    out = []
    for _ in range(count):
        state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
        out.append(((state >> 8) - 8388608) / 8388608 * scale)
    return out


def encode(dtype, vals):
    if dtype == "F32":
        return struct.pack("<%df" % len(vals), *vals)
    if dtype == "F16":
        return struct.pack("<%de" % len(vals), *vals)
    if dtype == "BF16":  # truncation of the float32 bits (exact for the values used here)
        f32 = struct.pack("<%df" % len(vals), *vals)
        return b"".join(f32[i + 2 : i + 4] for i in range(0, len(f32), 4))
    raise ValueError(dtype)


def safetensors(tensors, metadata=None):
    """tensors: list of (name, dtype, shape, values). Valid, contiguous data_offsets."""
    header = {}
    data = b""
    for name, dtype, shape, vals in tensors:
        raw = encode(dtype, vals)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the reference writer pads the header to 8 bytes
    return struct.pack("<Q", len(text)) + text + data


def model(d=4, heads=2, ff=8, layers=1, vocab_size=5, classes=2, dtype="F32", pe="vaswani", **extra):
    tensors = [("embedding.weight", dtype, [vocab_size, d], values(1, vocab_size * d, 1.0))]
    for i in range(layers):
        p = "layers.%d." % i
        s = 100 * (i + 2)
        w = 1 / math.sqrt(d)
        tensors += [
            (p + "self_attn.in_proj_weight", dtype, [3 * d, d], values(s, 3 * d * d, w)),
            (p + "self_attn.in_proj_bias", dtype, [3 * d], values(s + 1, 3 * d, 0.125)),
            (p + "self_attn.out_proj.weight", dtype, [d, d], values(s + 2, d * d, w)),
            (p + "self_attn.out_proj.bias", dtype, [d], values(s + 3, d, 0.125)),
            (p + "linear1.weight", dtype, [ff, d], values(s + 4, ff * d, w)),
            (p + "linear1.bias", dtype, [ff], values(s + 5, ff, 0.125)),
            (p + "linear2.weight", dtype, [d, ff], values(s + 6, d * ff, 1 / math.sqrt(ff))),
            (p + "linear2.bias", dtype, [d], values(s + 7, d, 0.125)),
            (p + "norm1.weight", dtype, [d], [1 + v for v in values(s + 8, d, 0.125)]),
            (p + "norm1.bias", dtype, [d], values(s + 9, d, 0.125)),
            (p + "norm2.weight", dtype, [d], [1 + v for v in values(s + 10, d, 0.125)]),
            (p + "norm2.bias", dtype, [d], values(s + 11, d, 0.125)),
        ]
    tensors += [
        ("head.weight", dtype, [classes, d], values(7, classes * d, 0.5)),
        ("head.bias", dtype, [classes], values(8, classes, 0.125)),
    ]
    metadata = {"heads": str(heads), "num_layers": str(layers), "positional_encoding": pe}
    metadata.update({k: str(v) for k, v in extra.items()})
    return tensors, metadata


def main():
    os.makedirs(OUT, exist_ok=True)  # files it does not write (regression_*) are kept
    files = {}
    # The reader alone: one tensor per dtype, a scalar, an empty tensor, metadata only.
    files["reader_dtypes"] = safetensors(
        [
            ("a", "F32", [2, 3], values(1, 6, 2.0)),
            ("b", "F16", [3], [1.0, -2.0, 65504.0]),
            ("c", "BF16", [2], [1.0, -5.0]),
            ("s", "F32", [], [0.5]),
            ("e", "F16", [0, 4], []),
        ],
        {"format": "pt"},
    )
    files["reader_metadata_only"] = safetensors([], {"k": "v", "\u00e9": "\u2603"})
    # Models: the smallest, F16/BF16, pre-norm with GELU, two layers, fairseq PE, no PE.
    t, m = model()
    files["model_f32"] = safetensors(t, m)
    t, m = model(dtype="F16", vocab_size=3)
    files["model_f16"] = safetensors(t, m)
    t, m = model(dtype="BF16", heads=1, d=2, ff=3)
    files["model_bf16"] = safetensors(t, m)
    t, m = model(layers=2, norm_first="true", activation="gelu", layer_norm_eps="1e-6",
                 embedding_scale="0.5", vocab="a b c d e", labels="x y")
    files["model_prenorm_gelu_2layers"] = safetensors(t, m)
    t, m = model(d=8, heads=4, pe="fairseq")
    files["model_fairseq"] = safetensors(t, m)
    t, m = model(pe="none", classes=1)
    files["model_no_pe"] = safetensors(t, m)
    # The position step in the attention: rotary (full, partial, interleaved), ALiBi (both modes,
    # a head count that is not a power of two), and the experiment's keys.
    t, m = model(d=8, heads=2, pe="rotary", rope_theta="10000.0", rope_scaling="null")
    files["model_rotary"] = safetensors(t, m)
    t, m = model(d=16, heads=2, pe="rotary", rope_theta="500", partial_rotary_factor="0.5",
                 rotary_layout="interleaved", task="copy", copy_distance="3", symbols="8",
                 train_max_length="64")
    files["model_rotary_partial_interleaved"] = safetensors(t, m)
    t, m = model(d=6, heads=3, pe="alibi", alibi_mode="causal")
    files["model_alibi_causal_3_heads"] = safetensors(t, m)
    t, m = model(d=8, heads=4, layers=2, pe="alibi", alibi_mode="symmetric", norm_first="true")
    files["model_alibi_symmetric"] = safetensors(t, m)
    # Malformed: each one error class (the fuzzer mutates from here).
    good = files["model_f32"]
    files["bad_truncated_length"] = good[:5]
    files["bad_truncated_header"] = good[:40]
    files["bad_truncated_data"] = good[:-3]
    files["bad_header_length"] = struct.pack("<Q", 1 << 40) + good[8:]
    files["bad_json"] = struct.pack("<Q", 9) + b'{"a":[1,}'
    files["bad_overlap"] = safetensors([("a", "F32", [2], [1, 2]), ("b", "F32", [2], [3, 4])]).replace(
        b'"data_offsets":[8,16]', b'"data_offsets":[4,12]')
    files["bad_dtype"] = safetensors([("a", "F32", [2], [1, 2])]).replace(b'"F32"', b'"I32"')
    t, m = model()
    t[3] = (t[3][0], t[3][1], t[3][2], [float("nan")] + t[3][3][1:])
    files["bad_nan_weight"] = safetensors(t, m)
    t, m = model()
    m["heads"] = "3"
    files["bad_metadata_heads"] = safetensors(t, m)
    t, m = model()
    files["bad_extra_tensor"] = safetensors(t + [("extra", "F32", [1], [0.0])], m)
    # Bad position-step metadata: each names its key.
    for name, pe, extra in [
        ("bad_positional_encoding", "rope", {}),
        ("bad_rope_theta", "rotary", {"rope_theta": "1"}),
        ("bad_rope_theta_overflow", "rotary", {"rope_theta": "1e999"}),
        ("bad_rope_scaling_json", "rotary", {"rope_scaling": '{"type":'}),
        ("unsupported_rope_scaling", "rotary", {"rope_scaling": '{"type":"linear","factor":2.0}'}),
        ("bad_partial_rotary_factor", "rotary", {"partial_rotary_factor": "0.3"}),
        ("bad_rotary_layout", "rotary", {"rotary_layout": "neox"}),
        ("bad_alibi_mode", "alibi", {"alibi_mode": "both"}),
        ("bad_copy_distance", "alibi", {"copy_distance": "-1"}),
    ]:
        t, m = model(d=8, heads=2, pe=pe, **extra)
        files[name] = safetensors(t, m)
    for name, data in sorted(files.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    shutil.copyfile(TAGGER, os.path.join(OUT, "tagger"))
    print("wrote %d files to %s" % (len(files) + 1, OUT))


if __name__ == "__main__":
    main()
