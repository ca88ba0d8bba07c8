"""Writes tests/data/neural_tangents_reference.json: the NTK and CNTK of the
transfer paper's architectures computed by neural-tangents (the independent
library the paper used), on the seeded random inputs of cases() (stored: the kernels only), for
tests/unit/kernels/test_ntk_deep.py.

Run where neural-tangents imports (it needs jax 0.4.x, and its `experimental`
module imports tf2jax, which recent jax breaks):
    JAX_ENABLE_X64=1 python tests/oracles/neural_tangents_reference.py
"""

import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parents[1] / "data" / "neural_tangents_reference.json"


def cases():
    rng = np.random.default_rng(0)
    X, Z = rng.random((5, 28, 28)), rng.random((3, 28, 28))
    X8 = rng.random((4, 8, 8))
    yield {"kind": "ntk_fc", "depth": 5, "w_std": 2 ** 0.5, "b_std": 1.0, "X": X, "Z": Z}
    yield {"kind": "ntk_fc", "depth": 2, "w_std": 1.3, "b_std": 0.4, "X": X8, "Z": None}
    yield {"kind": "cntk", "strides": [2, 2, 2, 2, 2, 1], "w_std": 2 ** 0.5, "b_std": 1.0, "X": X, "Z": Z}
    yield {"kind": "cntk", "strides": [2, 1, 2], "w_std": 1.3, "b_std": 0.4, "X": X8, "Z": None}


def reference(case):
    from neural_tangents import stax

    w, b = case["w_std"], case["b_std"]
    X, Z = case["X"], case["Z"]
    if case["kind"] == "ntk_fc":
        layers = [layer for _ in range(case["depth"]) for layer in (stax.Dense(1, W_std=w, b_std=b), stax.Relu())]
        _, _, kernel_fn = stax.serial(*layers, stax.Dense(1, W_std=w, b_std=b))
        flat = lambda A: None if A is None else A.reshape(len(A), -1)  # noqa: E731
        return kernel_fn(flat(X), flat(Z), "ntk")
    layers = [layer for s in case["strides"]
              for layer in (stax.Conv(1, (3, 3), strides=(s, s), padding="SAME", W_std=w, b_std=b), stax.Relu())]
    _, _, kernel_fn = stax.serial(*layers, stax.Flatten(), stax.Dense(1, W_std=w, b_std=b))
    return kernel_fn(X[..., None], None if Z is None else Z[..., None], "ntk")


if __name__ == "__main__":
    import neural_tangents

    out = {"neural_tangents": neural_tangents.__version__, "cases": []}
    for case in cases():
        K = np.asarray(reference(case), dtype=np.float64)
        row = {k: v for k, v in case.items() if k not in ("X", "Z")}
        out["cases"].append({**row, "K": K.tolist()})
    OUT.write_text(json.dumps(out))
    print(f"wrote {OUT}")
