"""Two image domains for LS-MMDT (Rodner et al. 2013, Figs. 4-6 in shape):
the source is clean images at ``source_size``, the target the held-out split
under one corruption, re-rendered at ``target_size`` (another sensor: the
features differ in dimension, the paper's heterogeneous case). The naive
target-to-source map (SVM-Source's, and MMDT-W0's prior) is the resize
itself, a linear map read off on the target's pixel basis."""

from __future__ import annotations

import numpy as np

from biokernels.seeds import make_rng
from biokernels.studies.images.data import ImageSet, resize
from biokernels.studies.images.tasks import load_set, stratified_take
from biokernels.synth.corruptions import corrupt

__all__ = ["image_domains", "resize_matrix"]


def resize_matrix(from_size: tuple[int, int], to_size: tuple[int, int]) -> np.ndarray:
    """The (prod(to_size), prod(from_size)) matrix of :func:`resize` (bilinear, linear in the pixels)."""
    k = int(np.prod(from_size))
    basis = ImageSet("basis", np.eye(k, dtype=np.float64).reshape(k, *from_size), np.zeros(k, int),
                     np.full(k, "train"), [])
    out = resize(basis, tuple(to_size), clip=False).images.reshape(k, -1)
    return out.T.astype(np.float64)


def image_domains(dataset: dict, cfg: dict, seed: int):
    """``(Xs, ys, Xt, yt, source_map)`` from ``images.dataset`` and
    ``mmdt.images`` (per_class_source, max_target, corruption, severity,
    source_size, target_size): Xs (n_s, prod(source_size)), Xt (n_t,
    prod(target_size)), source_map (prod(source_size), prod(target_size))."""
    s = load_set(dataset, seed)
    src = s.select(None, "train")
    n_classes = len(np.unique(src.labels))
    keep = stratified_take(src.labels, int(cfg["per_class_source"]) * n_classes, make_rng(seed, 11))
    src = ImageSet(s.name, src.images[keep], src.labels[keep], src.split[keep], s.class_names)
    tgt = s.select(None, "test")
    keep = stratified_take(tgt.labels, cfg.get("max_target"), make_rng(seed, 12))
    images = corrupt(tgt.images[keep].astype(np.float64), cfg["corruption"], int(cfg["severity"]),
                     make_rng(seed, 13), vmax=1.0)
    tgt = ImageSet(s.name, images.astype(np.float32), tgt.labels[keep], tgt.split[keep], s.class_names)
    src, tgt = resize(src, tuple(cfg["source_size"])), resize(tgt, tuple(cfg["target_size"]))
    flat = lambda x: x.images.reshape(len(x.labels), -1).astype(np.float64)  # noqa: E731
    M = resize_matrix(tuple(cfg["target_size"]), tuple(cfg["source_size"]))
    return flat(src), src.labels, flat(tgt), tgt.labels, M
