"""Image sets of the images study, as float32 arrays in [0, 1].

``digits`` (scikit-learn's bundled 8×8 digits, 1,797 images, values 0-16) is
the embedded default; ``fashion_mnist`` (Zalando's 70,000 28×28 images, read
by :mod:`biokernels.io.idx`) the real analogue; ``sample_patches`` (patches of
scikit-learn's two bundled photographs, class = photograph × quadrant) the
texture-like target whose classes no source shares, the role DTD plays in
the paper. :func:`resize` brings one set to another's image size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.ndimage as ndi

from biokernels.errors import InputError

__all__ = ["ImageSet", "load_digits_set", "load_fashion_mnist_set", "load_sample_patches", "resize",
           "FASHION_MNIST_CLASSES"]

FASHION_MNIST_CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                         "Sneaker", "Bag", "Ankle boot"]


@dataclass
class ImageSet:
    """``images`` (n, h, w) float32 in [0, 1]; ``labels`` (n,) int; ``split``
    (n,) str, "train" or "test" (the set's own split); ``class_names``."""

    name: str
    images: np.ndarray
    labels: np.ndarray
    split: np.ndarray
    class_names: list[str] = field(default_factory=list)

    def select(self, classes=None, split: str | None = None) -> "ImageSet":
        """The images of ``classes`` (all when None) and ``split`` (both when None)."""
        keep = np.ones(len(self.labels), dtype=bool)
        if classes is not None:
            unknown = sorted(set(int(c) for c in classes) - set(np.unique(self.labels).tolist()))
            if unknown:
                raise InputError(f"{self.name}: classes {unknown} not in the set (it has "
                                 f"{sorted(np.unique(self.labels).tolist())})")
            keep &= np.isin(self.labels, list(classes))
        if split is not None:
            keep &= self.split == split
        return ImageSet(self.name, self.images[keep], self.labels[keep], self.split[keep], self.class_names)


def load_digits_set(test_fraction: float = 0.5, seed: int = 0) -> ImageSet:
    """scikit-learn's 8×8 digits scaled to [0, 1], split train/test stratified by ``seed``."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    idx_tr, _ = train_test_split(np.arange(len(d.target)), test_size=test_fraction, random_state=seed,
                                 stratify=d.target)
    split = np.full(len(d.target), "test", dtype=object)
    split[idx_tr] = "train"
    return ImageSet("digits", (d.images / 16.0).astype(np.float32), d.target.astype(int), split.astype(str),
                    [str(i) for i in range(10)])


def load_fashion_mnist_set(folder, verify: bool = True) -> ImageSet:
    """Fashion-MNIST's 60,000 train and 10,000 test images scaled to [0, 1]."""
    from biokernels.io.idx import read_fashion_mnist

    parts = [read_fashion_mnist(folder, s, verify=verify) for s in ("train", "test")]
    images = np.concatenate([p[0] for p in parts]).astype(np.float32) / 255.0
    labels = np.concatenate([p[1] for p in parts]).astype(int)
    split = np.repeat(["train", "test"], [len(parts[0][1]), len(parts[1][1])])
    return ImageSet("fashion_mnist", images, labels, split, list(FASHION_MNIST_CLASSES))


def load_sample_patches(size: tuple[int, int], per_class: int, seed: int = 0,
                        test_fraction: float = 0.5) -> ImageSet:
    """Grayscale patches of ``size`` from scikit-learn's two sample photographs;
    class = photograph × quadrant (8 classes), ``per_class`` patches each at
    seeded positions. Raises InputError for a patch larger than a quadrant."""
    from sklearn.datasets import load_sample_images

    rng = np.random.default_rng(seed)
    h, w = (int(size[0]), int(size[1]))
    photos = load_sample_images()
    images, labels, names = [], [], []
    for p, (photo, fname) in enumerate(zip(photos.images, photos.filenames)):
        gray = photo.astype(np.float32).mean(axis=2) / 255.0
        H, W = gray.shape[0] // 2, gray.shape[1] // 2
        if h > H or w > W:
            raise InputError(f"sample_patches: patch {h}x{w} exceeds a quadrant ({H}x{W})")
        stem = str(fname).rsplit("/", 1)[-1].split(".")[0]
        for qi in range(2):
            for qj in range(2):
                top = rng.integers(qi * H, (qi + 1) * H - h + 1, per_class)
                left = rng.integers(qj * W, (qj + 1) * W - w + 1, per_class)
                images += [gray[t:t + h, s:s + w] for t, s in zip(top, left)]
                labels += [len(names)] * per_class
                names.append(f"{stem} {'tb'[qi]}{'lr'[qj]}")
    labels = np.asarray(labels)
    split = np.where(rng.random(len(labels)) < test_fraction, "test", "train")
    return ImageSet("sample_patches", np.stack(images).astype(np.float32), labels, split, names)


def resize(s: ImageSet, size: tuple[int, int], clip: bool = True) -> ImageSet:
    """The set with every image resized to ``size`` (bilinear, scipy.ndimage.zoom,
    linear in the pixels), clipped to [0, 1] unless ``clip`` is False."""
    h, w = s.images.shape[1:]
    if (h, w) == tuple(size):
        return s
    out = ndi.zoom(s.images, (1, size[0] / h, size[1] / w), order=1, grid_mode=True, mode="nearest")
    out = np.clip(out, 0, 1) if clip else out
    return ImageSet(s.name, out.astype(s.images.dtype), s.labels, s.split, s.class_names)
