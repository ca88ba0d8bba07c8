"""Neural tangent kernel of a one-hidden-layer ReLU network with bias.

Source: the "1 hidden layer ReLU fully connected network with an offset term"
of Radhakrishnan et al. 2023 (Methods "Details for virtual drug screening"),
neural-tangents' ``stax.serial(Dense(width, W_std=w_std, b_std=b_std), Relu(),
Dense(1, W_std=w_std, b_std=b_std))``; its infinite-width NTK (Jacot et al.
2018, Thm. 1; Arora et al. 2019, Eq. 8-10; Cho & Saul 2009) is::

    NTK(x,z) = b^2 + w^2 / (2 pi) * [ sqrt(S(x,x) S(z,z)) sin(theta)
                                      + 2 (pi - theta) S(x, z) ]

with ``S(x, z) = w^2 <x, z> / fan_in + b^2``, ``theta`` the angle of ``S``,
``w = w_std`` (default ``sqrt(2)``), ``b = b_std`` (default 1). ``fan_in=None``
means 1 (inputs already scaled); ``fan_in=p`` is neural-tangents on raw inputs.

Notes: docs/kernels_notes.md, section "NTK (kernels/ntk)".
"""

from __future__ import annotations

import math

import numpy as np
import torch

from biokernels.device import DEVICE_CHOICES, resolve_device

ArrayLike = np.ndarray | torch.Tensor

W_STD = math.sqrt(2.0)
B_STD = 1.0


# --------------------------------------------------------------------------- helpers


def _device(device, like=None) -> torch.device:
    """None -> the device of ``like`` (a tensor) or the CPU; a DEVICE_CHOICES
    name -> :func:`resolve_device`; else ``torch.device(device)``."""
    if device is None:
        return like.device if isinstance(like, torch.Tensor) else torch.device("cpu")
    if isinstance(device, str) and device in DEVICE_CHOICES:
        return resolve_device(device)
    return torch.device(device)


def _check_params(w_std: float, b_std: float, fan_in: float | None) -> tuple[float, float, float]:
    if not (math.isfinite(w_std) and w_std > 0):
        raise ValueError(f"w_std must be finite and > 0, got {w_std}")
    if not (math.isfinite(b_std) and b_std >= 0):
        raise ValueError(f"b_std must be finite and >= 0, got {b_std}")
    if fan_in is None:
        fan_in = 1.0
    if not (math.isfinite(fan_in) and fan_in > 0):
        raise ValueError(f"fan_in must be None or finite and > 0, got {fan_in}")
    return float(w_std) ** 2, float(b_std) ** 2, float(fan_in)


def _all_finite(T: torch.Tensor) -> bool:
    """No NaN or inf in T, by one fused min/max reduction (a NaN propagates to
    both; ``torch.isfinite(T).all()`` allocates a boolean copy and is ~30x
    slower on a large Gram)."""
    if T.numel() == 0:
        return True
    mn, mx = torch.aminmax(T)
    return bool(torch.isfinite(mn)) and bool(torch.isfinite(mx))


def _features(A: ArrayLike, device: torch.device, dtype: torch.dtype, name: str) -> torch.Tensor:
    T = torch.as_tensor(A, dtype=dtype, device=device)
    if T.ndim == 1:
        T = T[:, None]
    if T.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (n_samples, n_features), got shape {tuple(T.shape)}")
    if not _all_finite(T):
        raise ValueError(f"{name} holds NaN or infinite values")
    return T


def _float_dtype(dtype, A) -> torch.dtype:
    if dtype is not None:
        if dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
        return dtype
    if isinstance(A, torch.Tensor) and A.dtype in (torch.float32, torch.float64):
        return A.dtype
    return torch.float64


def _layer1(sq: torch.Tensor, w2: float, b2: float, fan_in: float) -> torch.Tensor:
    """``S(x, x) = w^2 ||x||^2 / fan_in + b^2`` with the same operations, in the
    same order, as the in-place transform of the Gram (so equal inner products
    and norms give bit-equal S, hence theta = 0 exactly on the diagonal)."""
    s = sq.clone()
    s.mul_(w2 / fan_in).add_(b2)
    return s


def _ntk_block_(S: torch.Tensor, sx: torch.Tensor, sz: torch.Tensor, w2: float, b2: float, fan_in: float,
                t1: torch.Tensor, t2: torch.Tensor) -> None:
    """In place: ``S`` holds ``<x, z>`` (b, m) on entry and the NTK on return.
    ``sx`` (b,), ``sz`` (m,) are ``S(x, x)``, ``S(z, z)``; t1, t2 are (b, m)
    scratch."""
    S.mul_(w2 / fan_in).add_(b2)                                   # S(x, z)
    torch.mul(sx[:, None], sz[None, :], out=t1)                   # S_xx S_zz
    torch.mul(S, S, out=t2)                                       # S^2 (no fused multiply-add:
    t1.sub_(t2).clamp_(min=0.0).sqrt_()                           # exactly 0 when S^2 = S_xx S_zz)
    # t1 = sqrt(S_xx S_zz - S^2) = sqrt(S_xx S_zz) sin(theta)
    torch.atan2(t1, S, out=t2)                                    # theta in [0, pi]
    t2.neg_().add_(math.pi)                                       # pi - theta
    S.mul_(t2).mul_(2.0).add_(t1).mul_(w2 / (2.0 * math.pi)).add_(b2)


def _scratch(buf: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """A contiguous (rows, cols) view of the flat scratch buffer ``buf``."""
    return buf[: rows * cols].view(rows, cols)


def _mirror_lower_(A: torch.Tensor, block: int) -> None:
    """Copy the strictly lower triangle of the square ``A`` onto its upper
    triangle, in place, block by block (so the result is exactly symmetric;
    vectorized and scalar code paths of the elementwise kernels may differ in
    the last bit)."""
    n = A.shape[0]
    for r0 in range(0, n, block):
        r1 = min(r0 + block, n)
        if r0:
            A[:r0, r0:r1].copy_(A[r0:r1, :r0].mT)
        Dg = A[r0:r1, r0:r1]
        Dg.copy_(torch.tril(Dg) + torch.tril(Dg, -1).mT)


def _check_block_rows(block_rows: int) -> int:
    if not (isinstance(block_rows, (int, np.integer)) and block_rows >= 1):
        raise ValueError(f"block_rows must be an int >= 1, got {block_rows!r}")
    return int(block_rows)


# --------------------------------------------------------------------------- public


def ntk_relu_from_gram(G: torch.Tensor, sq_norm_x: torch.Tensor, sq_norm_z: torch.Tensor, *,
                       w_std: float = W_STD, b_std: float = B_STD, fan_in: float | None = None,
                       out: torch.Tensor | None = None, block_rows: int = 1024,
                       symmetric: bool = False) -> torch.Tensor:
    """NTK of the one-hidden-layer ReLU network with bias from inner products.

    Parameters
    ----------
    G : torch.Tensor, shape (n, m), float32 or float64
        Inner products ``<x_i, z_j>``.
    sq_norm_x : torch.Tensor, shape (n,)
        ``||x_i||^2``.
    sq_norm_z : torch.Tensor, shape (m,)
        ``||z_j||^2``.
    w_std, b_std : float
        Weight and bias standard deviations (``w_std > 0``, ``b_std >= 0``).
    fan_in : float, optional
        The first layer's weight variance is ``w_std^2 / fan_in``; None means
        1 (inputs already scaled). ``fan_in = p`` is neural-tangents' Dense.
    out : torch.Tensor, shape (n, m), optional
        Where to write the result (same dtype and device as G); may be ``G``
        itself (in place). Default: a new tensor.
    block_rows : int
        Rows per block; the scratch memory is ``2 * block_rows * m`` entries.
    symmetric : bool
        G is a symmetric Gram of one set (``x = z``, so n = m and equal
        norms): only its lower triangle is read and transformed, and the
        result is mirrored, so it is exactly symmetric.

    Returns
    -------
    torch.Tensor, shape (n, m), G's dtype and device (``out`` if given).

    Raises
    ------
    ValueError
        Bad shapes or parameters (see :func:`ntk_relu`), or ``symmetric``
        with a non-square G.

    Source: module docstring (Jacot et al. 2018; Arora et al. 2019, Eq. 8-10;
    Cho & Saul 2009).
    """
    w2, b2, fan_in = _check_params(w_std, b_std, fan_in)
    block_rows = _check_block_rows(block_rows)
    if G.ndim != 2 or sq_norm_x.shape != (G.shape[0],) or sq_norm_z.shape != (G.shape[1],):
        raise ValueError(f"G (n, m) = {tuple(G.shape)} needs sq_norm_x (n,) and sq_norm_z (m,), got "
                         f"{tuple(sq_norm_x.shape)} and {tuple(sq_norm_z.shape)}")
    if out is None:
        out = torch.empty_like(G, memory_format=torch.contiguous_format)
    elif out.shape != G.shape or out.dtype != G.dtype or out.device != G.device:
        raise ValueError(f"out: expected shape {tuple(G.shape)}, {G.dtype} on {G.device}; got "
                         f"{tuple(out.shape)}, {out.dtype} on {out.device}")
    sx = _layer1(sq_norm_x.to(G.dtype), w2, b2, fan_in)
    sz = _layer1(sq_norm_z.to(G.dtype), w2, b2, fan_in)
    n, m = G.shape
    if symmetric and n != m:
        raise ValueError(f"symmetric: G must be square, got shape {tuple(G.shape)}")
    same = out.data_ptr() == G.data_ptr() and out.stride() == G.stride()
    b = min(block_rows, max(n, 1))
    t1 = torch.empty(b * m, dtype=G.dtype, device=G.device)
    t2 = torch.empty_like(t1)
    for r0 in range(0, n, b):
        r1 = min(r0 + b, n)
        w = r1 if symmetric else m
        o = out[r0:r1, :w]
        if not same:
            o.copy_(G[r0:r1, :w])
        _ntk_block_(o, sx[r0:r1], sz[:w], w2, b2, fan_in, _scratch(t1, r1 - r0, w), _scratch(t2, r1 - r0, w))
    if symmetric:
        _mirror_lower_(out, b)
    return out


def ntk_relu(X: ArrayLike, Z: ArrayLike | None = None, *, w_std: float = W_STD, b_std: float = B_STD,
             fan_in: float | None = None, device=None, dtype: torch.dtype | None = None) -> torch.Tensor:
    """NTK of a one-hidden-layer ReLU network with bias, on dense features.

    ``K[i, j] = NTK(X[i], Z[j])`` with the closed form of the module
    docstring (neural-tangents ``stax.serial(Dense(width, W_std=w_std,
    b_std=b_std), Relu(), Dense(1, W_std=w_std, b_std=b_std))``, NTK
    parameterization, infinite width).

    Parameters
    ----------
    X : array-like, shape (n, p)
    Z : array-like, shape (m, p), optional (defaults to X; the result is then
        exactly symmetric, computed from the lower triangle of ``X X^T``)
    w_std : float
        Weight standard deviation, > 0 (default sqrt(2)).
    b_std : float
        Bias ("offset") standard deviation, >= 0 (default 1).
    fan_in : float, optional
        First-layer weight variance ``w_std^2 / fan_in``; None means 1 (the
        inputs are already scaled, e.g. unit norm). ``fan_in=p`` reproduces
        neural-tangents on raw inputs.
    device : {"auto", "cpu", "cuda"} or torch.device, optional
        Default: X's device for tensors, else the CPU.
    dtype : torch.float32 or torch.float64, optional
        Default: X's dtype for floating tensors, else float64.

    Returns
    -------
    torch.Tensor, shape (n, m)

    Raises
    ------
    ValueError
        Inputs not 2-D, NaN/inf, feature counts differ, ``w_std <= 0``,
        ``b_std < 0`` or ``fan_in <= 0``.

    Source: Jacot et al. 2018 (NTK); Arora et al. 2019, Eq. 8-10; arc-cosine
    kernels of Cho & Saul 2009; neural-tangents ``stax`` (library).
    """
    dev = _device(device, X)
    dt = _float_dtype(dtype, X)
    Xt = _features(X, dev, dt, "X")
    if Z is None:
        G = Xt @ Xt.T
        sq = G.diagonal().clone()
        return ntk_relu_from_gram(G, sq, sq, w_std=w_std, b_std=b_std, fan_in=fan_in, out=G, symmetric=True)
    Zt = _features(Z, dev, dt, "Z")
    if Xt.shape[1] != Zt.shape[1]:
        raise ValueError(f"X has {Xt.shape[1]} features but Z has {Zt.shape[1]}")
    G = Xt @ Zt.T
    return ntk_relu_from_gram(G, Xt.square().sum(1), Zt.square().sum(1), w_std=w_std, b_std=b_std,
                              fan_in=fan_in, out=G)


def _index_pair(pair, sizes: tuple[int, int], device: torch.device, name: str) -> tuple[torch.Tensor, torch.Tensor]:
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
        raise ValueError(f"{name}: expected a pair (drug_index, cell_index) of int arrays")
    out = []
    for idx, size, what in zip(pair, sizes, ("drug", "cell")):
        t = torch.as_tensor(idx, device=device)
        if t.ndim != 1 or t.dtype.is_floating_point or t.dtype == torch.bool or t.is_complex():
            raise ValueError(f"{name}: the {what} index must be a 1-D int array, got {t.dtype} "
                             f"shape {tuple(t.shape)}")
        t = t.long()
        if t.numel() and (int(t.min()) < 0 or int(t.max()) >= size):
            raise ValueError(f"{name}: {what} index out of range [0, {size}): "
                             f"min {int(t.min())}, max {int(t.max())}")
        out.append(t)
    if out[0].shape != out[1].shape:
        raise ValueError(f"{name}: drug and cell index lengths differ ({out[0].numel()} vs {out[1].numel()})")
    return out[0], out[1]


def ntk_relu_indexed(drug_gram: ArrayLike, cell_gram: ArrayLike, rows, cols=None, *,
                     w_std: float = W_STD, b_std: float = B_STD, fan_in: float | None = None,
                     block_rows: int = 512, out: ArrayLike | None = None,
                     dtype: torch.dtype = torch.float32, device=None) -> ArrayLike:
    """NTK Gram of (drug, cell) samples from a drug Gram and a cell Gram.

    Sample ``i = (d_i, c_i)`` has features ``x_i = [drug_{d_i} | cell_{c_i}]``,
    so ``<x_i, x_j> = drug_gram[d_i, d_j] + cell_gram[c_i, c_j]`` and
    ``||x_i||^2 = drug_gram[d_i, d_i] + cell_gram[c_i, c_i]``; the NTK is
    :func:`ntk_relu_from_gram` of these, built ``block_rows`` rows at a time
    into ``out``. No (n, p) feature matrix and no product over the features
    is formed; besides ``out`` the memory is ``~3 * block_rows * m``
    entries.

    Parameters
    ----------
    drug_gram : array-like, shape (n_drugs, n_drugs)
        Inner products of the drug features (e.g. ``D @ D.T``).
    cell_gram : array-like, shape (n_cells, n_cells)
        Inner products of the cell features.
    rows : pair of int arrays, each shape (n,)
        ``(drug_index, cell_index)`` of the row samples.
    cols : pair of int arrays, each shape (m,), optional
        The column samples; default ``rows``. When omitted or the very same
        objects as ``rows``, only the lower triangle is computed (half the
        work) and mirrored, so the result is exactly symmetric.
    w_std, b_std, fan_in : float
        As :func:`ntk_relu`; ``fan_in`` is the total feature count
        ``p_drug + p_cell`` for neural-tangents on raw inputs.
    block_rows : int
        Rows per block.
    out : torch.Tensor or numpy.ndarray, shape (n, m), optional
        Preallocated result of ``dtype`` (a numpy array is written through a
        shared-memory tensor, so must be on the CPU). Default: a new tensor.
    dtype : torch.float32 or torch.float64
        Precision of the computation and the result (default float32: a
        54k x 54k Gram is then 10.9 GiB).
    device : {"auto", "cpu", "cuda"} or torch.device, optional
        Default: ``out``'s device, else ``drug_gram``'s, else the CPU.

    Returns
    -------
    torch.Tensor or numpy.ndarray, shape (n, m): ``out`` if given, else a new
    tensor.

    Raises
    ------
    ValueError
        Grams not square or not finite, indices not 1-D ints or out of range,
        drug/cell index lengths differ, ``out`` of the wrong shape, dtype or
        device, or bad kernel parameters.

    Source: inner products of concatenated features; NTK as :func:`ntk_relu`.
    """
    w2, b2, fan_in = _check_params(w_std, b_std, fan_in)
    block_rows = _check_block_rows(block_rows)
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    out_np = isinstance(out, np.ndarray)
    if out_np:
        if not out.flags.writeable:
            raise ValueError("out: the numpy array is read-only")
        out_t = torch.from_numpy(out)
    else:
        out_t = out
    dev = _device(device, out_t if out_t is not None else drug_gram)
    grams = []
    for g, name in ((drug_gram, "drug_gram"), (cell_gram, "cell_gram")):
        t = torch.as_tensor(g, dtype=dtype, device=dev)
        if t.ndim != 2 or t.shape[0] != t.shape[1]:
            raise ValueError(f"{name}: expected a square 2-D matrix, got shape {tuple(t.shape)}")
        if not _all_finite(t):
            raise ValueError(f"{name} holds NaN or infinite values")
        grams.append(t)
    Dg, Cg = grams
    sizes = (Dg.shape[0], Cg.shape[0])
    rd, rc = _index_pair(rows, sizes, dev, "rows")
    # the same samples on both sides (omitted, or the very same index objects)
    symmetric = cols is None or cols is rows or (
        isinstance(cols, (tuple, list)) and len(cols) == 2 and cols[0] is rows[0] and cols[1] is rows[1])
    if symmetric:
        cd, cc = rd, rc
    else:
        cd, cc = _index_pair(cols, sizes, dev, "cols")
    n, m = rd.numel(), cd.numel()
    if out_t is None:
        out_t = torch.empty((n, m), dtype=dtype, device=dev)
    elif out_t.shape != (n, m) or out_t.dtype != dtype or out_t.device != dev:
        raise ValueError(f"out: expected shape {(n, m)}, {dtype} on {dev}; got {tuple(out_t.shape)}, "
                         f"{out_t.dtype} on {out_t.device}")
    dd, dc = Dg.diagonal(), Cg.diagonal()
    sx = _layer1(dd[rd] + dc[rc], w2, b2, fan_in)
    sz = _layer1(dd[cd] + dc[cc], w2, b2, fan_in)
    b = min(block_rows, max(n, 1))
    t1 = torch.empty(b * m, dtype=dtype, device=dev)
    t2 = torch.empty_like(t1)
    for r0 in range(0, n, b):
        r1 = min(r0 + b, n)
        w = r1 if symmetric else m  # symmetric: the lower triangle, mirrored below
        o, u1, u2 = out_t[r0:r1, :w], _scratch(t1, r1 - r0, w), _scratch(t2, r1 - r0, w)
        torch.index_select(Dg.index_select(0, rd[r0:r1]), 1, cd[:w], out=u1)
        torch.index_select(Cg.index_select(0, rc[r0:r1]), 1, cc[:w], out=u2)
        torch.add(u1, u2, out=o)
        _ntk_block_(o, sx[r0:r1], sz[:w], w2, b2, fan_in, u1, u2)
    if symmetric:
        _mirror_lower_(out_t, b)
    return out if out_np else out_t


def empirical_ntk(X: ArrayLike, Z: ArrayLike | None = None, width: int = 4096, *, w_std: float = W_STD,
                  b_std: float = B_STD, fan_in: float | None = None, seed: int = 0,
                  dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Empirical NTK of one finite network, from autograd Jacobians.

    ``K[i, j] = sum over all parameters theta of df/dtheta(X[i]) df/dtheta(Z[j])``
    for the network of the module docstring with ``width`` hidden units and
    N(0, 1) parameters drawn from ``torch.Generator().manual_seed(seed)``. As
    ``width -> inf`` it converges to :func:`ntk_relu` (Jacot et al. 2018,
    Thm. 1), with fluctuations of order ``width^(-1/2)``. For tests; cost
    ``O((n + m) * width * p)`` time and ``(n + m) * width * (p + 2)``
    memory, CPU.

    Parameters
    ----------
    X : array-like, shape (n, p)
    Z : array-like, shape (m, p), optional (defaults to X)
    width : int
        Hidden units, >= 1.
    w_std, b_std, fan_in : float
        As :func:`ntk_relu`.
    seed : int
    dtype : torch dtype

    Returns
    -------
    torch.Tensor, shape (n, m), CPU

    Raises
    ------
    ValueError
        Bad shapes or parameters, ``width < 1``.

    Source: definition of the (empirical) NTK, Jacot et al. 2018; autograd
    (torch).
    """
    _, _, fan_in = _check_params(w_std, b_std, fan_in)
    if not (isinstance(width, (int, np.integer)) and width >= 1):
        raise ValueError(f"width must be an int >= 1, got {width!r}")
    cpu = torch.device("cpu")
    Xt = _features(X, cpu, dtype, "X")
    Zt = Xt if Z is None else _features(Z, cpu, dtype, "Z")
    if Xt.shape[1] != Zt.shape[1]:
        raise ValueError(f"X has {Xt.shape[1]} features but Z has {Zt.shape[1]}")
    p = Xt.shape[1]
    gen = torch.Generator().manual_seed(int(seed))
    params = [torch.randn(shape, generator=gen, dtype=dtype).requires_grad_()
              for shape in ((width, p), (width,), (1, width), (1,))]
    W1, b1, W2, b2 = params

    def f(x: torch.Tensor) -> torch.Tensor:
        h = (w_std / math.sqrt(fan_in)) * (x @ W1.T) + b_std * b1
        return ((w_std / math.sqrt(width)) * (torch.relu(h) @ W2.T) + b_std * b2)[:, 0]

    def jacobian(A: torch.Tensor) -> torch.Tensor:
        out = f(A)
        rows = []
        for i in range(A.shape[0]):
            g = torch.autograd.grad(out[i], params, retain_graph=i < A.shape[0] - 1)
            rows.append(torch.cat([gi.reshape(-1) for gi in g]))
        return torch.stack(rows)

    JX = jacobian(Xt)
    JZ = JX if Z is None else jacobian(Zt)
    return (JX @ JZ.T).detach()
