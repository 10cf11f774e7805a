"""PyTorch's tutorial PositionalEncoding, timed natively for `npm run bench`.

Usage: /usr/bin/python3 bench/torch_encode.py L:D [L:D ...]
Prints one JSON object: {"torch": version, "threads": n, "results": [{length, dim, ms, error}]}
where ms is the median time to build the table (as the tutorial does: float32 angles) and
error its max |value - float64| over sampled rows.
"""
import json
import math
import sys
import time

import numpy as np
import torch


def tutorial_table(length, dim):
    # beginner_source/transformer_tutorial.py, PositionalEncoding.__init__ (without the batch dim)
    position = torch.arange(length).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
    pe = torch.zeros(length, dim)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def max_error(pe, length, dim):
    rows = sorted({0, 1, length - 1, *[(k * (length - 1)) // 47 for k in range(48)]})
    p = np.array(rows, dtype=np.float64)[:, None]
    i = np.arange(dim // 2, dtype=np.float64)[None, :]
    angle = p * np.exp(-2.0 * i * math.log(10000.0) / dim)
    ref = np.empty((len(rows), dim))
    ref[:, 0::2] = np.sin(angle)
    ref[:, 1::2] = np.cos(angle)
    return float(np.max(np.abs(pe.numpy()[rows].astype(np.float64) - ref)))


def main():
    # PyTorch's default threading (all cores), as a user would run it: the hardest comparison.
    results = []
    for arg in sys.argv[1:]:
        length, dim = (int(x) for x in arg.split(":"))
        error = max_error(tutorial_table(length, dim), length, dim)
        samples = []
        budget = time.perf_counter() + 1.0
        while len(samples) < 3 or (len(samples) < 30 and time.perf_counter() < budget):
            t0 = time.perf_counter()
            tutorial_table(length, dim)
            samples.append((time.perf_counter() - t0) * 1000)
        results.append({"length": length, "dim": dim, "ms": float(np.median(samples)), "error": error})
    print(json.dumps({"torch": torch.__version__, "threads": torch.get_num_threads(), "results": results}))


if __name__ == "__main__":
    main()
