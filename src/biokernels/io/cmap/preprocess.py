"""CMAP / LINCS L1000 preprocessing for virtual drug screening
(Radhakrishnan et al. 2023, Methods "Preprocessing for CMAP data"):
:func:`preprocess_cmap` turns L1000 expression into per-(drug, cell line)
means and the cell-line control embedding. Its steps, the dose and time
fields by input layout and the paper's rules are described in
``docs/io_readers_notes.md``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from biokernels.io.cmap.averaging import Preprocessed, _preprocess
from biokernels.io.cmap.samples import DOSE_TIME_KEY, POOLED_KEY, check_replicate_key
from biokernels.io.gctx import open_matrix


GENE_SPACES = ("landmark", "best_inferred", "all")


def preprocess_cmap(gctx_path, valid_drugs, *, sample_meta: pd.DataFrame | None = None,
                    sample_meta_source: str | None = None, gene_info: pd.DataFrame | None = None,
                    log2_transform: bool = True, controls: pd.DataFrame | None = None,
                    missing_controls: str = "error", replicate_key=POOLED_KEY, chunk_size: int | None = None,
                    gene_space: str = "landmark", columns_excluded_upstream: int = 0,
                    upstream_counts: pd.DataFrame | None = None, progress_every: float | None = None,
                    log=None) -> Preprocessed:
    """Preprocess L1000 expression into per-(drug, cell line) means (or per
    (drug, cell line, dose, time)) and the cell-line control embedding.

    Parameters
    ----------
    gctx_path : path or list of paths
        GCTX or GCT text (told apart by content, :func:`biokernels.io.gctx.open_matrix`),
        rows = genes (``pr_gene_id``), columns = samples; several files
        (e.g. CMap LINCS 2020's ``level3_beta_trt_cp`` and ``level3_beta_ctl``
        matrices) are read one after the other: they must have the same rows
        (any order) and no column id in common.
    valid_drugs : iterable of str
        ``pert_id`` of the compounds with a parseable SMILES (the index of the
        fingerprint table).
    sample_meta : DataFrame, optional
        Index = sample ids; columns ``pert_id``, ``cell_id``, ``pert_type``
        and, when the layout has them, ``pert_dose`` (+ ``pert_dose_unit``)
        or ``pert_idose``, ``pert_time`` (+ ``pert_time_unit``) or
        ``pert_itime``. Default: the GCTX column metadata.
    sample_meta_source : str, optional
        Name used in error messages (the file the metadata came from).
    gene_info : DataFrame, optional
        GEO ``gene_info`` with ``pr_gene_id``, ``pr_gene_symbol`` and
        ``pr_is_lm`` (and ``pr_is_bing`` for ``gene_space`` best_inferred):
        only the genes of ``gene_space`` are kept (matrix rows missing from
        the table are dropped and counted). Default: every row.
    gene_space : {"landmark", "best_inferred", "all"}
        Genes kept with ``gene_info``: the 978 measured landmarks
        (``pr_is_lm``, the paper's), landmarks plus the best-inferred genes
        (``pr_is_bing``, 10,174 in L1000), or every gene of the table.
    log2_transform : bool
        Apply ``log2(x + 1)`` (input on linear scale). Only then are the
        genes equal to 1 dropped (the paper's rule is about values after its
        log2(x+1) scaling); with False the filter is skipped and the count
        row says so (the genes holding an exact 1.0 are counted, kept).
    controls : DataFrame, optional
        External control expression (cells x gene ids, final scale) used as
        the cell embedding instead of the ``ctl_vehicle`` samples (e.g. a
        level-5 input, which has no controls).
    missing_controls : {"error", "drop"}
        A cell line with treatments but no controls is an error, or its
        pairs are dropped and counted.
    replicate_key : ("pert", "cell") or ("pert", "cell", "dose", "time")
        What a replicate shares. ``("pert", "cell")`` (default, the paper):
        every dose and time of a (drug, cell line) is averaged; the pairs
        that pool several doses or times are counted (doses compared at 3
        significant digits, unknown times not counted as a mix). With dose
        and time: one row per (drug, cell line, dose, time); treatments of
        unknown time are dropped (counted).
    chunk_size : int, optional
        Columns read per chunk; default as many as fit 256 MiB of float64
        over the kept genes (34,000 at 978 genes, 2,700 at 12,328).
    columns_excluded_upstream : int
        Matrix columns left out of ``sample_meta`` on purpose by an earlier
        step that counted them (e.g. the CMap LINCS 2020 signature filters of
        :mod:`biokernels.io.lincs2020`): exactly this many columns may lack
        metadata (counted as such); any other number is an error.
    upstream_counts : DataFrame, optional
        That step's counts (``step``, ``reason``, ``n``), put first in
        ``counts``.
    progress_every : float, optional
        Seconds between two progress lines of the matrix read in ``log``
        (columns and bytes read, rate, time left; default 30).
    log : logging.Logger, optional
        Receives one line per count, the dose and time ranges, and the
        warnings (also issued as ``UserWarning``).

    Returns
    -------
    Preprocessed

    Raises
    ------
    InputError
        Matrix columns without metadata (other than the
        ``columns_excluded_upstream``), matrices with different rows or a
        column id in common, NaN/inf in the matrix, no sample
        left after a filter, a kept cell line without controls (named), or
        ``replicate_key`` with dose and time on metadata without a dose or
        time field (names the file and the fields).
    ValueError
        ``missing_controls``, ``replicate_key`` or ``gene_space`` not one of
        their values.

    Warns
    -----
    UserWarning
        No dose field (the dose >= 0 filter cannot run), or control values
        that look like z-scores (:func:`looks_like_zscores`).
    """
    import warnings
    from contextlib import ExitStack

    paths = [Path(p) for p in ([gctx_path] if isinstance(gctx_path, (str, Path)) else gctx_path)]
    if not paths:
        raise ValueError("gctx_path: expected a matrix file or a non-empty list of them")
    gctx_path = paths[0] if len(paths) == 1 else Path(", ".join(map(str, paths)))
    if gene_space not in GENE_SPACES:
        raise ValueError(f"gene_space: expected one of {list(GENE_SPACES)}, got {gene_space!r}")
    if missing_controls not in ("error", "drop"):
        raise ValueError(f"missing_controls: expected 'error' or 'drop', got {missing_controls!r}")
    key = check_replicate_key(replicate_key)
    by_dose = key == DOSE_TIME_KEY
    counts: list[dict] = []

    def note(step: str, reason: str, n: int) -> None:
        counts.append({"step": step, "reason": reason, "n": int(n)})
        if log is not None:
            log.info("%s: %s: %d", step, reason, n)

    def say(msg: str, *args) -> None:
        if log is not None:
            log.info(msg, *args)

    def warn(msg: str) -> None:
        if log is not None:
            log.warning(msg)
        warnings.warn(msg, UserWarning, stacklevel=4)

    with ExitStack() as stack:
        matrices = [stack.enter_context(open_matrix(p)) for p in paths]
        return _preprocess(matrices, gctx_path, valid_drugs, sample_meta, sample_meta_source, gene_info,
                           log2_transform, controls, missing_controls, key, chunk_size, gene_space,
                           columns_excluded_upstream, upstream_counts, progress_every, note, say, warn, counts,
                           log)
