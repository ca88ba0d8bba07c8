"""Image corruptions in the spirit of CIFAR-10-C, for small grayscale images.

Source: Hendrycks & Dietterich, ICLR 2019 (CIFAR-10-C), as used by
Radhakrishnan et al. 2023 (Fig. 3, SI Figs. S6-S7), reproduced on
scikit-learn's 8×8 ``load_digits`` images (values 0-16), so the MKL
comparison of SI Fig. S7 runs without downloading CIFAR-10-C.

Every corruption is ``f(images, severity, rng, vmax=16.0) -> ndarray``:
``images`` (n, h, w) in [0, vmax], ``severity`` 1-5, ``rng`` a
``numpy.random.Generator`` (the only randomness); it returns a new float64
array of the same shape clipped to [0, vmax]. ``CORRUPTIONS`` maps 19 names
to the functions; ``digit_transfer_task`` builds the clean / corrupted binary
task. Raises ``InputError`` (a ValueError) for a severity outside 1-5, images
that are not (n, h, w), or non-finite values.

Notes: docs/mkl_transfer_notes.md, section "Corruptions (synth/corruptions)".
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.fft
import scipy.ndimage as ndi

from biokernels.errors import InputError

__all__ = ["CORRUPTIONS", "corrupt", "digit_transfer_task", "load_digit_images"]


def _check(images, severity) -> np.ndarray:
    x = np.asarray(images, dtype=np.float64)
    if x.ndim != 3 or x.shape[1] < 2 or x.shape[2] < 2:
        raise InputError(f"images: expected shape (n, h, w) with h, w >= 2, got {x.shape}")
    if not np.isfinite(x).all():
        raise InputError("images: NaN or infinite values")
    if isinstance(severity, bool) or int(severity) != severity or not 1 <= int(severity) <= 5:
        raise InputError(f"severity: expected an integer 1-5, got {severity!r}")
    return x.copy()


def _clip(x, vmax):
    return np.clip(x, 0.0, vmax)


# ---------------------------------------------------------------- noise
def gaussian_noise(images, severity, rng, vmax=16.0):
    """Additive N(0, (c·vmax)²) noise, c = .04, .06, .08, .09, .10 (CIFAR-10-C)."""
    x = _check(images, severity)
    c = [0.04, 0.06, 0.08, 0.09, 0.10][severity - 1]
    return _clip(x + rng.normal(0.0, c * vmax, size=x.shape), vmax)


def shot_noise(images, severity, rng, vmax=16.0):
    """Poisson noise: ``Poisson(x/vmax · c) / c · vmax``, c = 500, 250, 100, 75, 50 (CIFAR-10-C)."""
    x = _check(images, severity)
    c = [500, 250, 100, 75, 50][severity - 1]
    return _clip(rng.poisson(x / vmax * c) / c * vmax, vmax)


def impulse_noise(images, severity, rng, vmax=16.0):
    """Salt-and-pepper: a fraction c = .01, .02, .03, .05, .07 of pixels set to 0 or vmax (CIFAR-10-C)."""
    x = _check(images, severity)
    c = [0.01, 0.02, 0.03, 0.05, 0.07][severity - 1]
    hit = rng.random(x.shape) < c
    salt = rng.random(x.shape) < 0.5
    x[hit & salt] = vmax
    x[hit & ~salt] = 0.0
    return x


def speckle_noise(images, severity, rng, vmax=16.0):
    """Multiplicative noise ``x + x·N(0, c²)``, c = .06, .1, .12, .16, .2 (CIFAR-10-C)."""
    x = _check(images, severity)
    c = [0.06, 0.10, 0.12, 0.16, 0.20][severity - 1]
    return _clip(x + x * rng.normal(0.0, c, size=x.shape), vmax)


# ---------------------------------------------------------------- blur
def _per_image(x, fn):
    return np.stack([fn(im) for im in x]) if len(x) else x


def gaussian_blur(images, severity, rng, vmax=16.0):
    """Gaussian blur, σ = .4, .5, .6, .7, .85 px (CIFAR-10-C's .4-1 on 32 px, shrunk for 8 px)."""
    x = _check(images, severity)
    s = [0.4, 0.5, 0.6, 0.7, 0.85][severity - 1]
    return _clip(ndi.gaussian_filter(x, sigma=(0, s, s), mode="constant"), vmax)


def _disk(radius: float) -> np.ndarray:
    r = int(np.ceil(radius))
    yy, xx = np.mgrid[-r:r + 1, -r:r + 1]
    k = ((xx ** 2 + yy ** 2) <= radius ** 2 + 1e-9).astype(float)
    return k / k.sum()


def defocus_blur(images, severity, rng, vmax=16.0):
    """Disk (defocus) kernel of radius 1, 1, 1.5, 1.5, 2 px, then a slight Gaussian alias blur."""
    x = _check(images, severity)
    radius, alias = [(1.0, 0.1), (1.0, 0.3), (1.5, 0.1), (1.5, 0.3), (2.0, 0.2)][severity - 1]
    k = _disk(radius)
    y = _per_image(x, lambda im: ndi.convolve(im, k, mode="constant"))
    return _clip(ndi.gaussian_filter(y, sigma=(0, alias, alias), mode="constant"), vmax)


def motion_blur(images, severity, rng, vmax=16.0):
    """Line kernel of length 2, 3, 3, 4, 5 px at a random angle per image (uniform in ±45°)."""
    x = _check(images, severity)
    length = [2, 3, 3, 4, 5][severity - 1]
    angles = rng.uniform(-45.0, 45.0, size=len(x))
    out = np.empty_like(x)
    size = 2 * length + 1
    for i, (im, ang) in enumerate(zip(x, angles)):
        k = np.zeros((size, size))
        k[length, length:length + length] = 1.0               # a one-sided streak, as in CIFAR-10-C
        k = np.clip(ndi.rotate(k, ang, reshape=False, order=1), 0.0, None)
        out[i] = ndi.convolve(im, k / k.sum(), mode="constant")
    return _clip(out, vmax)


def zoom_blur(images, severity, rng, vmax=16.0):
    """Average of the image and centre-zoomed copies, zoom 1 to 1.06-1.3 (CIFAR-10-C's ranges)."""
    x = _check(images, severity)
    top = [1.06, 1.11, 1.16, 1.21, 1.26][severity - 1]
    zooms = np.arange(1.0, top + 1e-9, 0.02)[1:]
    h, w = x.shape[1:]
    cy, cx = (h - 1) / 2, (w - 1) / 2
    acc = x.copy()
    for z in zooms:                                           # output (i,j) samples (c + (i-c)/z)
        acc += ndi.affine_transform(x, [1.0, 1 / z, 1 / z],
                                    offset=[0.0, cy - cy / z, cx - cx / z], order=1, mode="nearest")
    return _clip(acc / (len(zooms) + 1), vmax)


def glass_blur(images, severity, rng, vmax=16.0):
    """Gaussian blur (σ .3-.6), then random swaps of neighbouring pixels (δ = 1 px, 1-3 passes)."""
    x = _check(images, severity)
    sigma, iters = [(0.3, 1), (0.5, 1), (0.45, 2), (0.6, 2), (0.6, 3)][severity - 1]
    x = ndi.gaussian_filter(x, sigma=(0, sigma, sigma), mode="constant")
    n, h, w = x.shape
    for _ in range(iters):
        for r in range(h - 1, 0, -1):
            for c in range(w - 1, 0, -1):
                dy, dx = rng.integers(-1, 1, size=(2, n))     # in {-1, 0}
                rr, cc = r + dy, c + dx
                idx = np.arange(n)
                a = x[idx, r, c].copy()
                x[idx, r, c] = x[idx, rr, cc]
                x[idx, rr, cc] = a
    return _clip(x, vmax)


# ---------------------------------------------------------------- photometric
def contrast(images, severity, rng, vmax=16.0):
    """``(x - mean) · c + mean`` per image, c = .75, .5, .4, .3, .15 (CIFAR-10-C)."""
    x = _check(images, severity)
    c = [0.75, 0.5, 0.4, 0.3, 0.15][severity - 1]
    m = x.mean(axis=(1, 2), keepdims=True)
    return _clip((x - m) * c + m, vmax)


def brightness(images, severity, rng, vmax=16.0):
    """``x + c · vmax``, c = .1, .2, .3, .4, .5 (CIFAR-10-C adds these to the HSV value)."""
    x = _check(images, severity)
    c = [0.1, 0.2, 0.3, 0.4, 0.5][severity - 1]
    return _clip(x + c * vmax, vmax)


def saturate(images, severity, rng, vmax=16.0):
    """Intensity gain ``x · a + b · vmax`` (a, b) = (.3, 0), (.1, 0), (2, 0), (5, .1), (20, .2).

    CIFAR-10-C scales the HSV saturation; a grayscale image has none, so the
    gain acts on intensity: low severities wash the digit out, high ones
    saturate it to a binary-looking image.
    """
    x = _check(images, severity)
    a, b = [(0.3, 0.0), (0.1, 0.0), (2.0, 0.0), (5.0, 0.1), (20.0, 0.2)][severity - 1]
    return _clip(x * a + b * vmax, vmax)


def fog(images, severity, rng, vmax=16.0):
    """Add a smooth random field (Gaussian-filtered noise) of strength c·vmax, rescale.

    c = .2, .3, .4, .5, .6; ``x' = (x + fog) · max(x) / (max(x) + c·vmax)``
    as CIFAR-10-C does with its plasma fractal.
    """
    x = _check(images, severity)
    c = [0.2, 0.3, 0.4, 0.5, 0.6][severity - 1]
    field = ndi.gaussian_filter(rng.random(x.shape), sigma=(0, 1.5, 1.5), mode="wrap")
    lo = field.min(axis=(1, 2), keepdims=True)
    hi = field.max(axis=(1, 2), keepdims=True)
    field = (field - lo) / np.maximum(hi - lo, 1e-12)
    mx = x.max(axis=(1, 2), keepdims=True)
    return _clip((x + c * vmax * field) * mx / np.maximum(mx + c * vmax, 1e-12), vmax)


def snow(images, severity, rng, vmax=16.0):
    """Bright flakes (density .04-.12, motion-streaked) added; the image is slightly dimmed."""
    x = _check(images, severity)
    density, dim = [(0.04, 0.9), (0.06, 0.85), (0.08, 0.8), (0.10, 0.75), (0.12, 0.7)][severity - 1]
    flakes = (rng.random(x.shape) < density) * vmax
    flakes = motion_blur(flakes, 1, rng, vmax) * 2.0
    return _clip(dim * x + flakes, vmax)


# ---------------------------------------------------------------- geometric / digital
def elastic_transform(images, severity, rng, vmax=16.0):
    """Smooth random displacement field (σ = 1 px), max displacement .4-1.2 px, bilinear resampling."""
    x = _check(images, severity)
    alpha = [0.4, 0.6, 0.8, 1.0, 1.2][severity - 1]
    n, h, w = x.shape
    yy, xx = np.mgrid[0:h, 0:w].astype(float)
    out = np.empty_like(x)
    for i in range(n):
        d = ndi.gaussian_filter(rng.uniform(-1.0, 1.0, size=(2, h, w)), sigma=(0, 1.0, 1.0), mode="reflect")
        d *= alpha / max(float(np.abs(d).max()), 1e-12)
        out[i] = ndi.map_coordinates(x[i], [yy + d[0], xx + d[1]], order=1, mode="constant")
    return _clip(out, vmax)


def pixelate(images, severity, rng, vmax=16.0):
    """Downsample (area average) to 7, 6, 5, 4, 3 px per side (for 8 px), upsample nearest."""
    x = _check(images, severity)
    n, h, w = x.shape
    frac = [7 / 8, 6 / 8, 5 / 8, 4 / 8, 3 / 8][severity - 1]
    hs, ws = max(1, round(h * frac)), max(1, round(w * frac))
    # area averaging via a fine grid: each low-res cell averages the pixels it covers
    rows = np.minimum((np.arange(h) * hs) // h, hs - 1)
    cols = np.minimum((np.arange(w) * ws) // w, ws - 1)
    small = np.zeros((n, hs, ws))
    cnt = np.zeros((hs, ws))
    np.add.at(cnt, (rows[:, None], cols[None, :]), 1.0)
    for r in range(h):
        for c in range(w):
            small[:, rows[r], cols[c]] += x[:, r, c]
    small /= cnt
    return _clip(small[:, rows][:, :, cols], vmax)


# IJG standard luminance quantisation table (JPEG Annex K, Table K.1)
_JPEG_Q = np.array([
    [16, 11, 10, 16, 24, 40, 51, 61], [12, 12, 14, 19, 26, 58, 60, 55],
    [14, 13, 16, 24, 40, 57, 69, 56], [14, 17, 22, 29, 51, 87, 80, 62],
    [18, 22, 37, 56, 68, 109, 103, 77], [24, 35, 55, 64, 81, 104, 113, 92],
    [49, 64, 78, 87, 103, 121, 120, 101], [72, 92, 95, 98, 112, 100, 103, 99]], dtype=float)


def jpeg_compression(images, severity, rng, vmax=16.0):
    """JPEG-like: 8×8 block DCT-II, quantised with the IJG luminance table at quality
    80, 65, 58, 50, 40 (CIFAR-10-C's qualities), on intensities mapped to 0-255.

    Deterministic (``rng`` unused). Images are padded (edge) to multiples of 8.
    """
    x = _check(images, severity)
    q = [80, 65, 58, 50, 40][severity - 1]
    scale = 5000 / q if q < 50 else 200 - 2 * q                      # IJG quality scaling
    table = np.clip(np.floor((_JPEG_Q * scale + 50) / 100), 1, 255)
    n, h, w = x.shape
    H, W = -(-h // 8) * 8, -(-w // 8) * 8
    pad = np.pad(x / vmax * 255.0 - 128.0, ((0, 0), (0, H - h), (0, W - w)), mode="edge")
    for r in range(0, H, 8):
        for c in range(0, W, 8):
            blk = scipy.fft.dctn(pad[:, r:r + 8, c:c + 8], type=2, axes=(1, 2), norm="ortho")
            blk = np.round(blk / table) * table
            pad[:, r:r + 8, c:c + 8] = scipy.fft.idctn(blk, type=2, axes=(1, 2), norm="ortho")
    return _clip((pad[:, :h, :w] + 128.0) / 255.0 * vmax, vmax)


def rotate(images, severity, rng, vmax=16.0):
    """Rotation by ±(5, 10, 15, 20, 30)° (random sign per image), bilinear, zero fill."""
    x = _check(images, severity)
    deg = [5, 10, 15, 20, 30][severity - 1]
    signs = rng.choice([-1.0, 1.0], size=len(x))
    out = np.stack([ndi.rotate(im, s * deg, reshape=False, order=1, mode="constant") for im, s in
                    zip(x, signs)]) if len(x) else x
    return _clip(out, vmax)


def translate(images, severity, rng, vmax=16.0):
    """Shift by .5, 1, 1.5, 2, 2.5 px in a uniformly random direction per image, bilinear, zero fill."""
    x = _check(images, severity)
    d = [0.5, 1.0, 1.5, 2.0, 2.5][severity - 1]
    theta = rng.uniform(0.0, 2 * np.pi, size=len(x))
    out = np.stack([ndi.shift(im, (d * np.sin(t), d * np.cos(t)), order=1, mode="constant")
                    for im, t in zip(x, theta)]) if len(x) else x
    return _clip(out, vmax)


CORRUPTIONS: dict[str, Callable] = {
    "gaussian_noise": gaussian_noise, "shot_noise": shot_noise, "impulse_noise": impulse_noise,
    "speckle_noise": speckle_noise, "gaussian_blur": gaussian_blur, "defocus_blur": defocus_blur,
    "motion_blur": motion_blur, "zoom_blur": zoom_blur, "glass_blur": glass_blur,
    "contrast": contrast, "brightness": brightness, "saturate": saturate, "fog": fog, "snow": snow,
    "elastic_transform": elastic_transform, "pixelate": pixelate,
    "jpeg_compression": jpeg_compression, "rotate": rotate, "translate": translate,
}


def corrupt(images, name: str, severity: int, rng: np.random.Generator, vmax: float = 16.0) -> np.ndarray:
    """Apply ``CORRUPTIONS[name]``; raises InputError for an unknown name."""
    if name not in CORRUPTIONS:
        raise InputError(f"corruption: unknown name {name!r}; expected one of {sorted(CORRUPTIONS)}")
    return CORRUPTIONS[name](images, severity, rng, vmax)


def load_digit_images(classes=(3, 8)) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8×8 digits (no download) of the given classes.

    Returns
    -------
    images : ndarray (n, 8, 8), float64, values 0-16
    labels : ndarray (n,), int

    Raises
    ------
    InputError
        A class not in 0-9, or fewer than 2 distinct classes.
    """
    from sklearn.datasets import load_digits

    classes = tuple(int(c) for c in classes)
    if len(set(classes)) < 2 or any(c < 0 or c > 9 for c in classes):
        raise InputError(f"classes: expected >= 2 distinct digits in 0-9, got {classes}")
    d = load_digits()
    keep = np.isin(d.target, classes)
    return d.images[keep].astype(np.float64), d.target[keep].astype(int)


def _split_counts(n: int, fracs: list[float]) -> list[int]:
    raw = np.array(fracs) * n
    out = np.floor(raw).astype(int)
    out[np.argsort(-(raw - out))[: n - out.sum()]] += 1
    return out.tolist()


def digit_transfer_task(corruption: str, severity: int, rng: np.random.Generator, *,
                        classes=(3, 8), source_fraction: float = 0.5,
                        source_test_fraction: float = 1 / 6, target_test_fraction: float = 0.5,
                        max_target: int = 1000, images=None, labels=None, vmax: float = 16.0) -> dict:
    """Source (clean) / target (corrupted) binary task from the 8×8 digits.

    The paper (Methods, "Comparison with multiple kernel learning
    approaches") uses CIFAR-10 cars vs deer as source (10 000 train / 2 000
    test) and each CIFAR-10-C corruption of held-out images as target (1 000
    train / 1 000 test). Digits has only ~180 images per class (3: 183, 8: 174
    → 357), so all of them are used: a stratified random ``source_fraction``
    goes to the source, the rest to the target (disjoint images, like
    CIFAR-10 train vs the CIFAR-10-C test images); the source is split
    train/test 5:1 (10 000:2 000) and the target 1:1, each target split capped
    at ``max_target`` (1 000, never reached with digits). Only the target
    images are corrupted.

    Parameters
    ----------
    corruption : str
        A key of ``CORRUPTIONS``.
    severity : int, 1-5
    rng : numpy.random.Generator
        Drives the split and the corruption.
    classes : pair of ints
        ``classes[1]`` is the positive class (label 1), ``classes[0]`` label 0.
    images, labels : optional arrays (n, h, w) and (n,)
        Use these instead of the digits (labels must be two values = classes).

    Returns
    -------
    dict with ``X_source_train, y_source_train, X_source_test, y_source_test,
    X_target_train, y_target_train, X_target_test, y_target_test`` (X
    flattened to (n, h·w) float64 in [0, vmax], y int 0/1) and ``info``
    (counts, corruption, severity, classes).

    Raises
    ------
    InputError
        Unknown corruption, bad severity or fractions, a class with too few
        images for every split to hold both classes.
    """
    if corruption not in CORRUPTIONS:
        raise InputError(f"corruption: unknown name {corruption!r}; expected one of {sorted(CORRUPTIONS)}")
    for name, f in (("source_fraction", source_fraction), ("source_test_fraction", source_test_fraction),
                    ("target_test_fraction", target_test_fraction)):
        if not 0.0 < f < 1.0:
            raise InputError(f"{name}: expected a value in (0, 1), got {f}")
    if images is None:
        images, labels = load_digit_images(classes)
    images = np.asarray(images, dtype=np.float64)
    labels = np.asarray(labels)
    if images.ndim != 3 or labels.shape != (images.shape[0],):
        raise InputError(f"images/labels: expected (n, h, w) and (n,), got {images.shape} and {labels.shape}")
    parts = {k: [] for k in ("src_tr", "src_te", "tgt_tr", "tgt_te")}
    for cls in classes:
        idx = np.flatnonzero(labels == cls)
        if idx.size < 4:
            raise InputError(f"class {cls}: {idx.size} images, need >= 4 (one per split)")
        idx = rng.permutation(idx)
        n_src, n_tgt = _split_counts(idx.size, [source_fraction, 1 - source_fraction])
        n_src_te, n_src_tr = _split_counts(n_src, [source_test_fraction, 1 - source_test_fraction])
        n_tgt_te, n_tgt_tr = _split_counts(n_tgt, [target_test_fraction, 1 - target_test_fraction])
        if min(n_src_te, n_src_tr, n_tgt_te, n_tgt_tr) < 1:
            raise InputError(f"class {cls}: {idx.size} images are too few for the requested fractions")
        cap = max(1, max_target // len(classes))
        n_tgt_tr, n_tgt_te = min(n_tgt_tr, cap), min(n_tgt_te, cap)
        src, tgt = idx[:n_src], idx[n_src:]
        parts["src_te"].append(src[:n_src_te])
        parts["src_tr"].append(src[n_src_te:])
        parts["tgt_te"].append(tgt[:n_tgt_te])
        parts["tgt_tr"].append(tgt[n_tgt_te:n_tgt_te + n_tgt_tr])
    sel = {k: rng.permutation(np.concatenate(v)) for k, v in parts.items()}
    y = (labels == classes[1]).astype(int)
    flat = lambda a: a.reshape(len(a), -1)  # noqa: E731
    tgt_tr = corrupt(images[sel["tgt_tr"]], corruption, severity, rng, vmax)
    tgt_te = corrupt(images[sel["tgt_te"]], corruption, severity, rng, vmax)
    out = {
        "X_source_train": flat(images[sel["src_tr"]]), "y_source_train": y[sel["src_tr"]],
        "X_source_test": flat(images[sel["src_te"]]), "y_source_test": y[sel["src_te"]],
        "X_target_train": flat(tgt_tr), "y_target_train": y[sel["tgt_tr"]],
        "X_target_test": flat(tgt_te), "y_target_test": y[sel["tgt_te"]],
    }
    out["info"] = {"corruption": corruption, "severity": int(severity), "classes": list(classes),
                   **{f"n_{k}": int(len(v)) for k, v in sel.items()}}
    return out
