"""CIFAR-10-C-style corruptions of the 8×8 digits (biokernels.synth.corruptions)."""

from __future__ import annotations

import numpy as np
import pytest

from biokernels.errors import InputError
from biokernels.synth.corruptions import (CORRUPTIONS, corrupt, digit_transfer_task,
                                          load_digit_images)

DETERMINISTIC = {"gaussian_blur", "defocus_blur", "zoom_blur", "contrast", "brightness",
                 "saturate", "pixelate", "jpeg_compression"}


@pytest.fixture(scope="module")
def digits():
    X, y = load_digit_images((3, 8))
    return X[:40], y[:40]


def test_registry_size():
    assert len(CORRUPTIONS) >= 12


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_contract(name, digits):
    X, _ = digits
    X0 = X.copy()
    f = CORRUPTIONS[name]
    for sev in (1, 5):
        a = f(X, sev, np.random.default_rng(1))
        b = f(X, sev, np.random.default_rng(1))
        assert a.shape == X.shape and a.dtype == np.float64
        assert a.min() >= 0.0 and a.max() <= 16.0
        np.testing.assert_array_equal(a, b)                    # same seed, same output
        assert not np.array_equal(a, X)                         # it changes something
    np.testing.assert_array_equal(X, X0)                        # input untouched
    if name not in DETERMINISTIC:
        assert not np.array_equal(f(X, 3, np.random.default_rng(1)), f(X, 3, np.random.default_rng(2)))
    for bad in (0, 6, 2.5):
        with pytest.raises(InputError, match="severity"):
            f(X, bad, np.random.default_rng(0))


def test_contrast_and_brightness_closed_form(digits):
    X, _ = digits
    m = X.mean(axis=(1, 2), keepdims=True)
    # (x - m)·c + m is a convex combination of values in [0, 16]: no clipping
    np.testing.assert_allclose(CORRUPTIONS["contrast"](X, 2, np.random.default_rng(0)), (X - m) * 0.5 + m)
    np.testing.assert_allclose(CORRUPTIONS["brightness"](X, 5, np.random.default_rng(0)),
                               np.minimum(X + 8.0, 16.0))


def test_pixelate_is_block_average(digits):
    """Severity 4 on 8×8: 4×4 cells of 2×2 pixels, each replaced by its mean."""
    X, _ = digits
    out = CORRUPTIONS["pixelate"](X, 4, np.random.default_rng(0))
    ref = X.reshape(-1, 4, 2, 4, 2).mean(axis=(2, 4)).repeat(2, axis=1).repeat(2, axis=2)
    np.testing.assert_allclose(out, ref, atol=1e-12)       # means of 4 values <= 16: rounding


def test_jpeg_constant_image_stays_constant():
    """A constant 8×8 block has only a DC coefficient; quantising it keeps it constant."""
    X = np.full((2, 8, 8), 7.3)
    out = CORRUPTIONS["jpeg_compression"](X, 5, np.random.default_rng(0))
    # the DCT round trip of a constant block is constant to ~64 eps * 16 ~ 2e-13
    assert np.ptp(out[0]) < 1e-12 and abs(out[0, 0, 0] - 7.3) < 16 * 16 / 255   # ≤ one DC step


def test_gaussian_noise_std():
    """Mid-grey image (8), σ = 0.1·16 = 1.6 at severity 5: clipping at 0/16 is 5σ away."""
    X = np.full((50, 8, 8), 8.0)
    d = CORRUPTIONS["gaussian_noise"](X, 5, np.random.default_rng(0)) - X
    # 3200 draws: se of the mean 1.6 / sqrt(3200) = 0.028 (0.1 = 3.5 se), of the sd
    # 1 / sqrt(2 * 3200) = 1.25 % (5 % = 4 se)
    assert abs(d.mean()) < 0.1 and d.std() == pytest.approx(1.6, rel=0.05)


@pytest.mark.parametrize("name", ["contrast", "brightness", "gaussian_blur", "pixelate", "zoom_blur"])
def test_severity_monotone(name, digits):
    X, _ = digits
    dist = [np.abs(CORRUPTIONS[name](X, s, np.random.default_rng(0)) - X).mean() for s in range(1, 6)]
    assert np.all(np.diff(dist) > 0), dist


def test_digit_transfer_task():
    task = digit_transfer_task("gaussian_noise", 3, np.random.default_rng(0))
    X, y = load_digit_images((3, 8))
    info = task["info"]
    # all 357 images (183 threes, 174 eights) used exactly once
    assert len(X) == 357
    total = sum(info[k] for k in ("n_src_tr", "n_src_te", "n_tgt_tr", "n_tgt_te"))
    assert total == 357
    for part in ("source_train", "source_test", "target_train", "target_test"):
        Xp, yp = task[f"X_{part}"], task[f"y_{part}"]
        assert Xp.shape == (len(yp), 64) and set(yp) == {0, 1}
    # source images are clean digits rows, target images are corrupted (not digit rows)
    flat = {row.tobytes() for row in X.reshape(len(X), -1)}
    assert all(r.tobytes() in flat for r in task["X_source_train"])
    assert not any(r.tobytes() in flat for r in task["X_target_test"])
    again = digit_transfer_task("gaussian_noise", 3, np.random.default_rng(0))
    np.testing.assert_array_equal(again["X_target_train"], task["X_target_train"])
    with pytest.raises(InputError, match="unknown"):
        digit_transfer_task("fog2", 3, np.random.default_rng(0))
    with pytest.raises(InputError, match="unknown"):
        corrupt(X, "nope", 1, np.random.default_rng(0))
