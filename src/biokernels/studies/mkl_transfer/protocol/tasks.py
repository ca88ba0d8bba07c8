"""Task builders of the transfer-versus-MKL study, all pure given a seed:
:func:`digit_tasks` (scikit-learn's 8×8 digits, two classes, clean source,
corrupted targets), :func:`image_pair_tasks` (two classes of the images
study's set, e.g. Fashion-MNIST: the train split clean as the source, the
test split corrupted as the targets) and :func:`viability_tasks` (drug response from a
DepMap/PRISM-style viability table: source = one cell line, targets = other
cell lines, features = drug fingerprints, disjoint source and target drugs)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from biokernels.errors import InputError


def digit_tasks(corruptions: Sequence[str], seed: int, *, severity: int = 5, classes=(3, 8),
                source_fraction: float = 0.5) -> tuple[dict, dict[str, dict], dict]:
    """Clean 8×8 digits (two classes) as source, corrupted copies as targets.

    For one seed the source/target split is the same for every corruption:
    :func:`biokernels.synth.corruptions.digit_transfer_task` draws the split
    first from ``default_rng(seed)``, then the corruption noise; the target
    images differ only by corruption.

    Parameters
    ----------
    corruptions : names in ``biokernels.synth.corruptions.CORRUPTIONS``
    seed : int
    severity : int 1-5 (CIFAR-10-C's highest, 5, as in the paper)
    classes : pair, the digit classes; ``classes[1]`` is label 1
    source_fraction : float, share of the images for the source

    Returns
    -------
    source : dict X_train (≈149, 64), y_train, X_test (≈30, 64), y_test
    targets : dict corruption -> dict X_train (≈88, 64), y_train, X_test (≈90, 64), y_test
    info : dict of counts

    Raises
    ------
    InputError
        Unknown corruption, bad severity (from the corruptions module), no corruption.
    """
    from biokernels.synth.corruptions import digit_transfer_task

    if not corruptions:
        raise InputError("images.corruptions: expected at least one corruption")
    source, targets, info = None, {}, {}
    for c in corruptions:
        t = digit_transfer_task(c, severity, np.random.default_rng(seed), classes=tuple(classes),
                                source_fraction=source_fraction)
        if source is None:
            source = {"X_train": t["X_source_train"], "y_train": t["y_source_train"],
                      "X_test": t["X_source_test"], "y_test": t["y_source_test"]}
            info = {k: v for k, v in t["info"].items() if k.startswith("n_")}
        targets[c] = {"X_train": t["X_target_train"], "y_train": t["y_target_train"],
                      "X_test": t["X_target_test"], "y_test": t["y_target_test"]}
    return source, targets, info


def image_pair_tasks(image_set, corruptions: Sequence[str], seed: int, *, classes, severity: int = 5,
                     n_source_train: int = 10000, n_source_test: int = 2000, n_target_train: int = 1000,
                     n_target_test: int = 1000) -> tuple[dict, dict[str, dict], dict]:
    """Two classes of an image set as the paper's cars-vs-deer task (SI Fig. S7).

    The source is ``n_source_train + n_source_test`` clean images of the
    set's train split (stratified); each target is the set's test split of
    the two classes under one corruption at ``severity``, split
    ``n_target_train`` / ``n_target_test`` (stratified). The paper's sizes are
    the defaults: 10,000 / 2,000 source and 1,000 / 1,000 per target. For one
    seed every corruption sees the same target images and the same split.

    Parameters
    ----------
    image_set : :class:`biokernels.studies.images.data.ImageSet` (values in [0, 1])
    corruptions : names in ``biokernels.synth.corruptions.CORRUPTIONS``
    seed : int
    classes : pair of labels of the set; ``classes[1]`` is label 1
    severity : int 1-5

    Returns
    -------
    source, targets (corruption -> task dict; ``X_*`` (n, h·w) float64,
    ``y_*`` 0/1), info (counts and classes)

    Raises
    ------
    InputError
        Not two distinct classes, a class missing from the set, no
        corruption, or a split larger than the images of a class allow.
    """
    from biokernels.seeds import make_rng
    from biokernels.studies.images.tasks import stratified_take
    from biokernels.synth.corruptions import CORRUPTIONS, corrupt

    classes = [int(c) for c in classes]
    if len(classes) != 2 or classes[0] == classes[1]:
        raise InputError(f"mkl_transfer.images.classes: expected two distinct classes, got {classes}")
    if not corruptions:
        raise InputError("mkl_transfer.images.corruptions: expected at least one corruption")
    names = sorted(CORRUPTIONS)

    def take(split: str, n: int, stream: int):
        sub = image_set.select(classes, split)
        if n > len(sub.labels):
            raise InputError(f"mkl_transfer.images: {n} images of classes {classes} asked from the "
                             f"{split} split of {image_set.name}, which has {len(sub.labels)}")
        idx = stratified_take(sub.labels, n, make_rng(seed, 20, stream))
        return sub.images[idx].astype(np.float64), (sub.labels[idx] == classes[1]).astype(int)

    def halves(y, n_first: int, stream: int):
        first = np.sort(stratified_take(y, n_first, make_rng(seed, 21, stream)))
        return first, np.setdiff1d(np.arange(len(y)), first)

    Xs, ys = take("train", n_source_train + n_source_test, 0)
    tr, te = halves(ys, n_source_train, 0)
    flat = Xs.reshape(len(Xs), -1)
    source = {"X_train": flat[tr], "y_train": ys[tr], "X_test": flat[te], "y_test": ys[te]}
    Xt, yt = take("test", n_target_train + n_target_test, 1)
    tr, te = halves(yt, n_target_train, 1)
    targets = {}
    for c in corruptions:
        if c not in CORRUPTIONS:
            raise InputError(f"mkl_transfer.images.corruptions: unknown {c!r}; expected one of {names}")
        img = corrupt(Xt, c, int(severity), make_rng(seed, 22, names.index(c)), vmax=1.0).reshape(len(Xt), -1)
        targets[c] = {"X_train": img[tr], "y_train": yt[tr], "X_test": img[te], "y_test": yt[te]}
    info = {"set": image_set.name, "classes": classes, "n_source_train": n_source_train,
            "n_source_test": n_source_test, "n_target_train": len(tr), "n_target_test": len(te)}
    return source, targets, info


def viability_tasks(viability: pd.DataFrame, features: pd.DataFrame, seed: int, *,
                    source_cell: str | None = None, target_cells: Sequence[str] | None = None,
                    label: str | float = "median", source_fraction: float = 0.5,
                    source_test_fraction: float = 1 / 6, n_target_train: int = 100
                    ) -> tuple[dict, dict[str, dict], dict]:
    """Cell line → cell line drug-response classification from a viability table.

    Parameters
    ----------
    viability : DataFrame with columns ``drug_key``, ``cell_id``, ``viability``
        (one row per pair; e.g. the DepMap study's prepared/targets.tsv)
    features : DataFrame indexed by drug_key, numeric columns (e.g. Morgan
        fingerprint bits); pairs whose drug has no row are dropped (counted
        in ``info``).
    seed : int, drives the drug split and the target training subset
    source_cell : the source cell line; None = the one with the most drugs
        (ties: first by name)
    target_cells : None or empty = every other cell line
    label : "median" (label 1 = viability below the cell line's median, so
        each cell line's classes are balanced) or a number (label 1 =
        viability below it, e.g. 0: the drug kills the cells)
    source_fraction : share of the drugs reserved for the source; the rest
        are the target drugs (disjoint: new cell line and new drugs)
    source_test_fraction : share of the source's drugs held out for its test
    n_target_train : target training drugs per cell line (the rest of its
        target drugs are the test set); capped so that >= 10 remain for test

    Returns
    -------
    source, targets (cell -> task dict), info (cells, counts, thresholds)

    Raises
    ------
    InputError
        Missing columns, an unknown source/target cell line, too few drugs,
        a target whose labels have a single class (names the target).
    """
    need = {"drug_key", "cell_id", "viability"}
    if not need <= set(viability.columns):
        raise InputError(f"viability table: missing columns {sorted(need - set(viability.columns))}")
    v = viability[list(need)].dropna()
    n_all = len(v)
    v = v[v["drug_key"].isin(features.index)]
    cells = v.groupby("cell_id")["drug_key"].nunique().sort_index()
    if cells.empty:
        raise InputError("viability table: no pair has a drug with features")
    if source_cell is None:
        source_cell = str(cells.sort_values(ascending=False, kind="stable").index[0])
    if source_cell not in cells.index:
        raise InputError(f"bio.source_cell: {source_cell!r} is not in the table ({cells.index.tolist()})")
    targets_ = [c for c in (target_cells or cells.index) if c != source_cell]
    bad = [c for c in targets_ if c not in cells.index]
    if bad or not targets_:
        raise InputError(f"bio.targets: {bad or 'none left'} (cell lines: {cells.index.tolist()})")
    X = features.apply(pd.to_numeric, errors="raise").astype(np.float64)
    rng = np.random.default_rng(seed)
    drugs = np.array(sorted(v["drug_key"].unique()))
    drugs = rng.permutation(drugs)
    n_src = int(round(source_fraction * len(drugs)))
    src_drugs, tgt_drugs = set(drugs[:n_src]), set(drugs[n_src:])

    def labels(sub):
        thr = float(sub["viability"].median()) if label == "median" else float(label)
        return (sub["viability"].to_numpy() < thr).astype(int), thr

    info = {"source_cell": source_cell, "n_pairs": n_all, "n_pairs_with_features": len(v), "thresholds": {}}
    s = v[(v["cell_id"] == source_cell)].sort_values("drug_key")
    y_all, info["thresholds"][source_cell] = labels(s)
    keep = s["drug_key"].isin(src_drugs).to_numpy()
    s, y_s = s[keep], y_all[keep]
    if len(s) < 12:
        raise InputError(f"source cell line {source_cell!r}: {len(s)} source drugs, need >= 12")
    perm = rng.permutation(len(s))
    n_te = max(1, int(round(source_test_fraction * len(s))))
    te, tr = perm[:n_te], perm[n_te:]
    Xs = X.loc[s["drug_key"]].to_numpy()
    source = {"X_train": Xs[tr], "y_train": y_s[tr], "X_test": Xs[te], "y_test": y_s[te]}
    targets = {}
    for c in targets_:
        t = v[v["cell_id"] == c].sort_values("drug_key")
        y_all, info["thresholds"][c] = labels(t)        # threshold over all of the cell's drugs
        keep = t["drug_key"].isin(tgt_drugs).to_numpy()
        t, y_t = t[keep], y_all[keep]
        if len(t) < 20:
            raise InputError(f"target {c!r}: {len(t)} target drugs, need >= 20")
        n_tr = min(int(n_target_train), len(t) - 10)
        perm = rng.permutation(len(t))
        tr, te = perm[:n_tr], perm[n_tr:]
        if np.unique(y_t[tr]).size < 2:
            raise InputError(f"target {c!r}: its {n_tr} training drugs have a single class "
                             f"({int(y_t[tr][0])}) at threshold {info['thresholds'][c]:.3g}")
        Xt = X.loc[t["drug_key"]].to_numpy()
        targets[c] = {"X_train": Xt[tr], "y_train": y_t[tr], "X_test": Xt[te], "y_test": y_t[te]}
    info["n_source_train"], info["n_source_test"] = len(source["y_train"]), len(source["y_test"])
    return source, targets, info
