"""Infinite-width NTKs of deep ReLU networks: fully connected and convolutional.

Source: Jacot et al. 2018 (Thm. 1) and Arora et al. 2019 (Eq. 8-10 for the
fully connected recursion, section 4 and Appendix for the CNTK), in the "ntk"
parameterization of neural-tangents (``Dense``/``Conv`` with ``W_std``,
``b_std``; ``Relu``; ``Flatten``). The transfer paper (Radhakrishnan et al.
2023, Methods "Model descriptions") uses 5 hidden layers for the NTK and, for
the CNTK, six 3×3 convolutions with zero padding, the first five of stride 2,
followed by a fully connected layer (no global average pooling).

Kernels take float arrays or tensors and return a float tensor of shape
(n, m) on the device of ``X`` (or ``device``). The recursions and the padding
convention: docs/images_notes.md, section "Kernels".
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from biokernels.kernels.ntk import B_STD, W_STD

ArrayLike = np.ndarray | torch.Tensor

__all__ = ["ntk_fc", "cntk", "same_padding", "CNTK_STRIDES"]

CNTK_STRIDES = (2, 2, 2, 2, 2, 1)


def _tensor(A: ArrayLike, name: str, dtype, device) -> torch.Tensor:
    T = torch.as_tensor(A, device=device)
    T = T.to(dtype or (T.dtype if T.is_floating_point() else torch.float64))
    if not torch.isfinite(T).all():
        raise ValueError(f"{name} holds NaN or infinite values")
    return T


def _check_std(w_std: float, b_std: float) -> tuple[float, float]:
    if not (math.isfinite(w_std) and w_std > 0):
        raise ValueError(f"w_std must be finite and > 0, got {w_std}")
    if not (math.isfinite(b_std) and b_std >= 0):
        raise ValueError(f"b_std must be finite and >= 0, got {b_std}")
    return float(w_std) ** 2, float(b_std) ** 2


def _relu_maps(S: torch.Tensor, sx: torch.Tensor, sz: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Arc-cosine maps of a covariance S whose variances have square roots
    ``sx`` and ``sz`` (broadcasting against S): E[relu(u) relu(v)] and
    E[relu'(u) relu'(v)] (Cho & Saul 2009). S is left intact."""
    tiny = torch.finfo(S.dtype).tiny
    cos = S / sx.clamp_min(tiny)
    cos.div_(sz.clamp_min(tiny)).clamp_(-1.0, 1.0)
    theta = torch.arccos(cos)
    D = theta.neg_().add_(math.pi)  # pi - theta, in theta's buffer
    A = cos.mul(cos).neg_().add_(1.0).clamp_min_(0.0).sqrt_()  # sin(theta)
    A.addcmul_(D, cos).mul_(sx).mul_(sz).div_(2 * math.pi)
    return A, D.div_(2 * math.pi)


def ntk_fc(X: ArrayLike, Z: ArrayLike | None = None, *, depth: int = 5, w_std: float = W_STD,
           b_std: float = B_STD, dtype: torch.dtype | None = None,
           device: torch.device | str | None = None) -> torch.Tensor:
    """NTK of ``[Dense, Relu] * depth + [Dense]`` (fan-in scaled, neural-tangents).

    X (n, p) and Z (m, p) are feature rows (images flattened); the first layer
    divides <x, z> by p. ``depth=1`` equals :func:`biokernels.kernels.ntk.ntk_relu`
    with ``fan_in=p``. Returns (n, m) in ``dtype`` (default: X's float dtype,
    float64 for integers). Raises ValueError for depth < 1, bad std, feature
    counts that differ, or non-finite inputs.
    """
    if isinstance(depth, bool) or int(depth) != depth or depth < 1:
        raise ValueError(f"depth must be an integer >= 1, got {depth!r}")
    w2, b2 = _check_std(w_std, b_std)
    X = _tensor(X, "X", dtype, device).flatten(1)
    Z = X if Z is None else _tensor(Z, "Z", X.dtype, X.device).flatten(1)
    if X.shape[1] != Z.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Z has {Z.shape[1]}")
    p = X.shape[1]
    S = w2 * (X @ Z.T) / p + b2
    vx = w2 * (X * X).sum(1) / p + b2
    vz = w2 * (Z * Z).sum(1) / p + b2
    T = S.clone()
    for _ in range(int(depth)):
        A, D = _relu_maps(S, vx.sqrt()[:, None], vz.sqrt()[None, :])
        S = A.mul_(w2).add_(b2)
        T.mul_(D).mul_(w2).add_(S)
        del D
        vx, vz = w2 * vx / 2 + b2, w2 * vz / 2 + b2
    return T


def same_padding(size: int, stride: int, k: int = 3) -> tuple[int, int, int]:
    """XLA/TensorFlow ``SAME`` padding: (output size, pad before, pad after)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + k - size, 0)
    return out, total // 2, total - total // 2


def _images(A: ArrayLike, name: str, dtype, device) -> torch.Tensor:
    T = _tensor(A, name, dtype, device)
    if T.ndim == 3:
        T = T[:, None]
    if T.ndim != 4:
        raise ValueError(f"{name}: expected images of shape (n, h, w) or (n, c, h, w), got {tuple(T.shape)}")
    return T


def _conv_diag(v: torch.Tensor, stride: int) -> torch.Tensor:
    """Per-position variances (n, H, W) through a 3×3 all-ones conv, SAME zero padding."""
    Ho, h0, h1 = same_padding(v.shape[1], stride)
    Wo, w0, w1 = same_padding(v.shape[2], stride)
    vp = F.pad(v[:, None], (w0, w1, h0, h1))
    return F.conv2d(vp, torch.ones(1, 1, 3, 3, dtype=v.dtype, device=v.device), stride=stride)[:, 0]


def _offset_range(size: int, stride: int, a: int, before: int, out: int) -> tuple[slice, slice]:
    """Output positions q whose input q·s + a - before lies inside [0, size)
    (the rest read zero padding), and those inputs."""
    lo = max(0, -(-(before - a) // stride))
    hi = min(out, (size - 1 - a + before) // stride + 1)
    if hi <= lo:
        return slice(0, 0), slice(0, 0)
    p0 = lo * stride + a - before
    return slice(lo, hi), slice(p0, p0 + stride * (hi - lo - 1) + 1, stride)


def _conv_pairs(T: torch.Tensor, stride: int) -> torch.Tensor:
    """Covariance of positions (b1, b2, H, W, H, W) through a 3×3 conv: the sum
    over the offsets a of T[q·s + a, q'·s + a], SAME zero padding."""
    H, W = T.shape[2], T.shape[3]
    Ho, h0, _ = same_padding(H, stride)
    Wo, w0, _ = same_padding(W, stride)
    out = T.new_zeros(T.shape[0], T.shape[1], Ho, Wo, Ho, Wo)
    for ah in range(3):
        qh, ph = _offset_range(H, stride, ah, h0, Ho)
        for aw in range(3):
            qw, pw = _offset_range(W, stride, aw, w0, Wo)
            out[:, :, qh, qw, qh, qw] += T[:, :, ph, pw, ph, pw]
    return out


def _patches(X: torch.Tensor, stride: int) -> torch.Tensor:
    """3×3 patches with SAME zero padding: (n, Ho*Wo, c*9)."""
    _, h0, h1 = same_padding(X.shape[2], stride)
    _, w0, w1 = same_padding(X.shape[3], stride)
    return F.unfold(F.pad(X, (w0, w1, h0, h1)), 3, stride=stride).transpose(1, 2)


def _cntk_block(Px, Pz, vx, vz, shape, strides, w2, b2) -> torch.Tensor:
    """CNTK of one block of image pairs, from the first layer's patches."""
    c9 = Px.shape[2]
    Ho, Wo = shape
    S = (w2 / c9) * torch.einsum("iqk,jrk->ijqr", Px, Pz) + b2
    S = S.view(Px.shape[0], Pz.shape[0], Ho, Wo, Ho, Wo)
    T = S
    for s in strides[1:]:
        A, D = _relu_maps(S, vx.sqrt()[:, None, :, :, None, None], vz.sqrt()[None, :, None, None, :, :])
        S = (w2 / 9) * _conv_pairs(A, s) + b2
        T = S + (w2 / 9) * _conv_pairs(T.mul_(D), s)
        vx, vz = (w2 / 9) * _conv_diag(vx / 2, s) + b2, (w2 / 9) * _conv_diag(vz / 2, s) + b2
    A, D = _relu_maps(S, vx.sqrt()[:, None, :, :, None, None], vz.sqrt()[None, :, None, None, :, :])
    n1, n2, H, W = A.shape[:4]
    diag = lambda M: M.reshape(n1, n2, H * W, H * W).diagonal(dim1=2, dim2=3).mean(-1)  # noqa: E731
    nngp = w2 * diag(A) + b2
    return nngp + w2 * diag(T.mul_(D))


def cntk(X: ArrayLike, Z: ArrayLike | None = None, *, strides=CNTK_STRIDES, w_std: float = W_STD,
         b_std: float = B_STD, block: int = 32, dtype: torch.dtype | None = None,
         device: torch.device | str | None = None) -> torch.Tensor:
    """CNTK of ``[Conv(3×3, stride s, SAME), Relu]`` for s in ``strides``, then
    ``Flatten, Dense`` (no global average pooling), neural-tangents' "ntk"
    parameterization.

    X (n, h, w) or (n, c, h, w) images, Z likewise (default X). Pairs are done
    in blocks of ``block`` × ``block`` images: memory about
    ``6 · block² · (h/s₁)² (w/s₁)²`` floats. Returns (n, m). Raises ValueError
    for empty strides, a stride < 1, shapes that differ, or non-finite inputs.
    """
    strides = tuple(int(s) for s in strides)
    if not strides or min(strides) < 1:
        raise ValueError(f"strides: expected at least one stride >= 1, got {strides}")
    if int(block) < 1:
        raise ValueError(f"block must be >= 1, got {block}")
    w2, b2 = _check_std(w_std, b_std)
    X = _images(X, "X", dtype, device)
    same = Z is None
    Z = X if same else _images(Z, "Z", X.dtype, X.device)
    if X.shape[1:] != Z.shape[1:]:
        raise ValueError(f"X images have shape {tuple(X.shape[1:])} but Z images {tuple(Z.shape[1:])}")
    s1 = strides[0]
    Ho, Wo = same_padding(X.shape[2], s1)[0], same_padding(X.shape[3], s1)[0]
    Px, Pz = _patches(X, s1), (None if same else _patches(Z, s1))
    c9 = Px.shape[2]
    vx = ((w2 / c9) * (Px * Px).sum(2) + b2).view(-1, Ho, Wo)
    vz = vx if same else ((w2 / c9) * (Pz * Pz).sum(2) + b2).view(-1, Ho, Wo)
    Pz = Px if same else Pz
    out = torch.empty(X.shape[0], Z.shape[0], dtype=X.dtype, device=X.device)
    b = int(block)
    for i in range(0, X.shape[0], b):
        for j in range(i if same else 0, Z.shape[0], b):
            K = _cntk_block(Px[i:i + b], Pz[j:j + b], vx[i:i + b], vz[j:j + b], (Ho, Wo), strides, w2, b2)
            out[i:i + b, j:j + b] = K
            if same and j != i:
                out[j:j + b, i:i + b] = K.T
    return out
