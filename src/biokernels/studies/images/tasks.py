"""The images study's tasks, built from a config section and a seed.

- :func:`source_set`: the source images (the set's train split, the
  configured classes, at most ``max_train`` rows, stratified by the seed).
- :func:`projection_targets`: per target of ``images.projection.targets``
  (``overlap``/``partial``: the set's test split of the named classes;
  ``disjoint``: another image set, resized), a train and a test part.
- :func:`translation_target`: the set's test split, corrupted by one
  CIFAR-10-C corruption at the configured severity, split train:test 9:1 as
  in the paper.
Every split is stratified and seeded (:func:`biokernels.seeds.make_rng`).
"""

from __future__ import annotations

import numpy as np

from biokernels.errors import InputError
from biokernels.seeds import make_rng
from biokernels.studies.images.data import (ImageSet, load_digits_set, load_fashion_mnist_set,
                                            load_sample_patches, resize)
from biokernels.synth.corruptions import corrupt

__all__ = ["load_set", "source_set", "projection_targets", "translation_target", "stratified_take",
           "split_train_test"]


def load_set(dataset: dict, seed: int) -> ImageSet:
    """The study's image set from ``images.dataset`` (name digits or fashion_mnist)."""
    name = dataset.get("name")
    if name == "digits":
        return load_digits_set(seed=seed)
    if name == "fashion_mnist":
        if not dataset.get("path"):
            raise InputError("images.dataset.path: the folder of the four Fashion-MNIST files is required")
        return load_fashion_mnist_set(dataset["path"], verify=bool(dataset.get("verify", True)))
    raise InputError(f"images.dataset.name: expected digits or fashion_mnist, got {name!r}")


def stratified_take(labels: np.ndarray, n: int | None, rng: np.random.Generator) -> np.ndarray:
    """Indices of at most ``n`` rows (all when None or larger), classes in
    proportion (largest remainders), in a seeded order."""
    idx = rng.permutation(len(labels))
    if n is None or n >= len(labels):
        return idx
    classes, counts = np.unique(labels, return_counts=True)
    raw = counts / counts.sum() * n
    take = np.floor(raw).astype(int)
    take[np.argsort(-(raw - take))[: n - take.sum()]] += 1
    out = [idx[labels[idx] == c][:k] for c, k in zip(classes, take)]
    return rng.permutation(np.concatenate(out))


def split_train_test(labels: np.ndarray, test_fraction: float, rng: np.random.Generator,
                     max_train: int | None = None, max_test: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stratified seeded train/test indices; raises InputError when a class
    cannot have a row on both sides."""
    if not 0 < test_fraction < 1:
        raise InputError(f"test_fraction: expected a value in (0, 1), got {test_fraction}")
    tr, te = [], []
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        k = int(round(len(idx) * test_fraction))
        if k < 1 or k >= len(idx):
            raise InputError(f"class {c}: {len(idx)} images cannot be split {1 - test_fraction:g}:{test_fraction:g}")
        te.append(idx[:k])
        tr.append(idx[k:])
    tr, te = np.concatenate(tr), np.concatenate(te)
    tr = tr[stratified_take(labels[tr], max_train, rng)]
    te = te[stratified_take(labels[te], max_test, rng)]
    return tr, te


def source_set(s: ImageSet, classes, max_train: int | None, seed: int) -> ImageSet:
    """The source: train split, ``classes`` (None: all), at most ``max_train`` rows."""
    src = s.select(classes, "train")
    keep = stratified_take(src.labels, max_train, make_rng(seed, 1))
    return ImageSet(src.name, src.images[keep], src.labels[keep], src.split[keep], src.class_names)


def projection_targets(s: ImageSet, cfg: dict, seed: int) -> dict[str, dict]:
    """name -> dict(X_train, y_train, X_test, y_test, classes, in_source) per
    configured target; ``cfg`` is ``images.projection``."""
    shape = s.images.shape[1:]
    out = {}
    for t, (name, spec) in enumerate(cfg["targets"].items()):
        kind = spec.get("set", "self")
        if kind == "self":
            pool = s.select(spec["classes"], "test")
        elif kind == "digits":
            pool = resize(load_digits_set(seed=seed), shape)
        elif kind == "sample_patches":
            pool = load_sample_patches(shape, int(spec.get("per_class", 150)), seed=seed)
        else:
            raise InputError(f"images.projection.targets.{name}.set: expected self, digits or sample_patches, "
                             f"got {kind!r}")
        tr, te = split_train_test(pool.labels, float(cfg.get("test_fraction", 0.5)), make_rng(seed, 2, t),
                                  spec.get("max_train"), spec.get("max_test"))
        src = set(int(c) for c in cfg.get("source_classes") or range(len(s.class_names)))
        classes = sorted(np.unique(pool.labels).tolist())
        out[name] = {"X_train": pool.images[tr].reshape(len(tr), -1), "y_train": pool.labels[tr],
                     "X_test": pool.images[te].reshape(len(te), -1), "y_test": pool.labels[te],
                     "classes": classes, "set": pool.name,
                     "in_source": sum(c in src for c in classes) if kind == "self" else 0}
    return out


def translation_target(s: ImageSet, corruption: str, severity: int, cfg: dict, seed: int) -> dict:
    """The set's test split corrupted by ``corruption`` at ``severity``, split
    train:test by ``cfg["test_fraction"]`` (paper: 9:1), capped by
    ``max_images`` (before the split)."""
    pool = s.select(None, "test")
    keep = stratified_take(pool.labels, cfg.get("max_images"), make_rng(seed, 3))
    rng = make_rng(seed, 4, sorted(_corruption_names()).index(corruption))
    images = corrupt(pool.images[keep].astype(np.float64), corruption, int(severity), rng, vmax=1.0)
    labels = pool.labels[keep]
    tr, te = split_train_test(labels, float(cfg.get("test_fraction", 0.1)), make_rng(seed, 5))
    flat = images.reshape(len(images), -1)
    return {"X_train": flat[tr], "y_train": labels[tr], "X_test": flat[te], "y_test": labels[te]}


def _corruption_names():
    from biokernels.synth.corruptions import CORRUPTIONS

    return CORRUPTIONS
