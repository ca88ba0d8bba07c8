"""Data sets of the diffusion-kernel study: network, tasks and splits
(Sun, Ji & Ye 2008), from the embedded generator or from real files."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.errors import InputError

#: Source types with a network file: type -> the source's key of the file's
#: path. A type is the name of the network format that reads the file (a key
#: of :data:`biokernels.io.networks.NETWORK_READERS`, the same name as a PIMKL
#: network's ``format``); the source's keys named as the reader's other
#: parameters are its settings (``source_col``, ``target_col``, ``weight_col``
#: of ``edgelist``; ``currency_metabolites`` of ``gem``). The schema's enum of
#: a source's ``type`` is ``synthetic`` plus these keys
#: (tests/unit/test_registries.py).
NETWORK_SOURCES = {
    "edgelist": "network_path",   # a TSV network, e.g. the von Mering PPI network
    "gem": "gem_path",            # a LIGAND-style enzyme network from a metabolic model
    "biogrid": "biogrid_path",    # BioGRID TAB3 interactions (biokernels.io.biogrid)
}
#: The label format of a real source without ``label_format``.
DEFAULT_LABEL_FORMAT = "mips_funcat"
#: What a shipped config writes as a download's sha256 that only its user
#: can pin (these machines have no network); the workflow stops at parse
#: time naming the key and how to pin it (:func:`source_file_problems`).
UNPINNED = "unpinned"
#: Settings every label format may take from the source (the task window);
#: ``proteins`` is set by :func:`prepare_inputs`, not by the config.
SHARED_LABEL_SETTINGS = ("min_annotated", "max_annotated", "proteins")


def source_files(source: dict) -> list[str]:
    """The file keys (``*_path``) a real diffusion source reads: its
    network's (:data:`NETWORK_SOURCES`) and its label format's (the label
    reader's ``*_path`` parameters); ``[]`` for a synthetic source.

    Raises
    ------
    InputError
        Unknown source type or label format (the known ones listed).
    """
    from biokernels.io.labels import LABEL_READERS
    from biokernels.registry import lookup, settings_of

    if source["type"] == "synthetic":
        return []
    path_key = lookup(NETWORK_SOURCES, source["type"], "source type (besides synthetic)")
    reader = lookup(LABEL_READERS, source.get("label_format", DEFAULT_LABEL_FORMAT), "label_format")
    return [path_key, *(k for k in settings_of(reader) if k.endswith("_path"))]


def source_file_problems(name: str, source: dict) -> list[str]:
    """What the schema cannot check of a real diffusion source's files.

    * each file it reads (:func:`source_files`) is either a local path or a
      ``downloads`` entry, not both and not neither;
    * ``downloads`` and ``sha256`` name only files it reads (``sha256``:
      local ones; a download carries its own);
    * every download's ``sha256`` is pinned: these machines cannot fetch a
      file to compute one, so the message says how (as for the L1000 GEO
      files in the README);
    * no setting of another label format is set (it would be ignored).

    Parameters
    ----------
    name : str
        The source's name (``diffusion.sources.<name>``).
    source : dict
        The source's config entry (schema-validated).

    Returns
    -------
    list of str
        One message per problem, each naming the dotted key.
    """
    from biokernels.io.labels import LABEL_READERS
    from biokernels.registry import settings_of

    if source["type"] == "synthetic":
        return []
    key = f"diffusion.sources.{name}"
    try:
        files = source_files(source)
    except ValueError as err:   # InputError: the schema's enums make this unreachable from the workflow
        return [f"{key}: {err}"]
    downloads = source.get("downloads") or {}
    problems = []
    for f in files:
        if source.get(f) and f in downloads:
            problems.append(f"{key}.{f} is set and is in {key}.downloads: keep one (a local file or a download)")
        elif not source.get(f) and f not in downloads:
            problems.append(f"{key}.{f} is neither set (a local file) nor in {key}.downloads (a checksummed "
                            "download)")
    problems += [f"{key}.downloads.{f} is not a file this source reads (it reads {files})"
                 for f in downloads if f not in files]
    for name in source.get("sha256") or {}:
        f = f"{name}_path"
        if f not in files:
            problems.append(f"{key}.sha256.{name}: {f} is not a file this source reads (it reads {files})")
        elif f in downloads:
            problems.append(f"{key}.sha256.{name}: {f} is a download, whose own sha256 is checked; remove this one")
    for f, spec in downloads.items():
        if spec.get("sha256") in (None, "", UNPINNED):
            problems.append(
                f"{key}.downloads.{f}.sha256 is not pinned: download {spec.get('url')} once on a machine with "
                f"network, run `sha256sum <the downloaded file>` (the bytes as downloaded, before any gunzip) and "
                f"set {key}.downloads.{f}.sha256 to its 64 hex digits, or set {key}.{f} to a local copy "
                "instead (this workflow never fetches a file it cannot verify)")
    chosen = source.get("label_format", DEFAULT_LABEL_FORMAT)
    for fmt, reader in LABEL_READERS.items():
        if fmt != chosen:
            extra = [k for k in settings_of(reader) if k not in SHARED_LABEL_SETTINGS and k in source
                     and source[k] is not None]
            problems += [f"{key}.{k} is set but label_format is {chosen}, which does not read it; remove it"
                         for k in extra]
    return problems


def verify_local_files(source: dict, origin: str = "source") -> dict[str, str]:
    """Check the SHA-256 of the local files a source pins before anything
    reads them: its ``sha256`` maps a file key without ``_path`` (``network``
    for ``network_path``, ``gaf``, ``obo``, ...) to 64 hex digits.

    Returns
    -------
    dict
        File key -> the verified digest (the summary records them).

    Raises
    ------
    InputError
        A digest differs (the key, file, expected and actual digests are
        named) or a pinned key has no file.
    """
    from biokernels.io.download import sha256_file

    verified = {}
    for name, digest in (source.get("sha256") or {}).items():
        f = f"{name}_path"
        if not source.get(f):
            raise InputError(f"{origin}.sha256.{name}: {f} has no file to check")
        actual = sha256_file(source[f])
        if actual != str(digest).lower():
            raise InputError(f"{origin}.{f}: {source[f]}: sha256 mismatch: expected {digest}, got {actual} (the file "
                             "changed since it was pinned, or the pin is wrong)")
        verified[f] = actual
    return verified


def random_split(proteins: pd.Index, test_fraction: float, rng: np.random.Generator,
                 name: str = "split") -> pd.Series:
    """One random train/test partition of the proteins.

    Parameters
    ----------
    proteins : Index of protein names
    test_fraction : float in (0, 1)
    rng : numpy.random.Generator
    name : str
        Name of the returned Series (the split's id, e.g. ``"03"``).

    Returns
    -------
    Series of ``"train"``/``"test"`` indexed by protein, with
    ``round(test_fraction * n)`` test proteins.
    """
    n = len(proteins)
    is_test = np.zeros(n, bool)
    is_test[rng.choice(n, int(round(test_fraction * n)), replace=False)] = True
    out = pd.Series(np.where(is_test, "test", "train"), index=proteins, name=name)
    out.index.name = "protein"
    return out


def prepare_inputs(source: dict, test_fraction: float, rng: np.random.Generator, log=None
                   ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Build a data set's cleaned network, task table and splits from its
    config entry (``diffusion.sources.<name>``).

    Source types: ``synthetic`` (:func:`biokernels.synth.networks.planted_function_network`)
    and those of :data:`NETWORK_SOURCES`: ``edgelist`` (a TSV network, e.g.
    the von Mering PPI network), ``gem`` (a LIGAND-style enzyme network
    rebuilt from a metabolic model, :func:`biokernels.io.networks.read_gem_network`)
    and ``biogrid`` (BioGRID TAB3, :func:`biokernels.io.biogrid.read_biogrid_tab3`),
    read through :data:`biokernels.io.networks.NETWORK_READERS`. The real ones
    take labels in ``label_format`` (default ``mips_funcat``: MIPS FunCat,
    :func:`biokernels.io.labels.read_mips_funcat`; ``gaf``: GO annotations
    propagated over the ontology, :func:`biokernels.io.go.load_gaf`), read
    through :data:`biokernels.io.labels.LABEL_READERS`, and keep the
    functions with at least ``min_annotated`` (and at most
    ``max_annotated``) proteins in the network. Local files pinned in the
    source's ``sha256`` are checked first (:func:`verify_local_files`).
    Real data sets have no published split: the given split (``00``) is a
    seeded random one. The random splits of the stability test are separate
    (:func:`random_split`, one file each), so asking for more of them leaves
    the finished ones alone.

    Returns
    -------
    edges : DataFrame ``protein_a``, ``protein_b``, ``weight``
    labels : DataFrame of 0/1 (n, t), index ``protein`` (the node order)
    given : DataFrame (n, 1) of train/test, column ``00`` (the given split)
    summary : dict of counts (``network``: the network reader's cleaning
        counts; ``annotations``: the label reader's, when it gives them,
        e.g. GO's filters, NOT blocks, propagation and size window;
        ``labels``: the task selection's; ``components``), and
        ``sha256`` of the verified local files

    Raises
    ------
    biokernels.errors.InputError
        On malformed files (named with the row/field), a local file whose
        sha256 differs from its pin, an unknown source type or label format
        (the known ones listed), or a missing setting.
    """
    from biokernels.io.labels import LABEL_READERS, select_tasks
    from biokernels.io.networks import NETWORK_READERS, adjacency_matrix, component_summary
    from biokernels.registry import call, lookup, settings_of
    from biokernels.synth.networks import planted_function_network

    say = log.info if log else (lambda *a, **k: None)
    kind = source["type"]
    summary: dict = {"type": kind, "paper_dataset": source["paper_dataset"]}
    if kind == "synthetic":
        try:
            edges, labels, given = planted_function_network(source["n_proteins"], source["n_edges"],
                                                          source["n_tasks"], rng, test_fraction=test_fraction,
                                                          **source.get("generator", {}))
        except (ValueError, TypeError) as err:
            raise ValueError(f"synthetic source (n_proteins={source['n_proteins']!r}, n_edges="
                             f"{source['n_edges']!r}, n_tasks={source['n_tasks']!r}, generator = "
                             f"{source.get('generator', {})}): {err}") from err
        proteins = list(labels.index)
    else:
        path_key = lookup(NETWORK_SOURCES, kind, "source type (besides synthetic)")
        verified = verify_local_files(source, f"source ({kind})")
        if verified:
            summary["sha256"] = verified
        reader = NETWORK_READERS[kind]     # the type is the network format's name
        settings = {k: source[k] for k in settings_of(reader)[1:] if k in source}
        edges, counts = call(reader, settings, f"source ({kind})", source[path_key])
        if "currency_metabolites" in settings:
            summary["currency_metabolites"] = list(settings["currency_metabolites"])
        summary["network"] = counts
        proteins = sorted(set(edges["protein_a"]) | set(edges["protein_b"]))
        label_format = source.get("label_format", DEFAULT_LABEL_FORMAT)
        read_labels = lookup(LABEL_READERS, label_format, "label_format")
        fixed = {"proteins": proteins} if "proteins" in settings_of(read_labels) else {}
        annotations = call(read_labels, {k: source[k] for k in settings_of(read_labels, exclude=fixed)
                                         if k in source}, f"source (label_format {label_format})", **fixed)
        if isinstance(annotations, tuple):
            annotations, summary["annotations"] = annotations
        labels, label_counts = select_tasks(annotations, proteins, source["min_annotated"],
                                            source.get("max_annotated"))
        summary["labels"] = label_counts
        given = None
    _, A = adjacency_matrix(edges, proteins)
    summary["components"] = component_summary(A)
    summary.update(proteins=len(proteins), edges=len(edges), tasks=labels.shape[1])
    say("data set: %s", summary)
    if given is None:
        given = random_split(labels.index, test_fraction, rng)
    given = given.rename("00").to_frame()
    given.index.name = "protein"
    return edges, labels, given, summary


def load_split_inputs(eigen_path, labels_path, splits_path, split: str = "00"
                      ) -> tuple[np.ndarray, np.ndarray, pd.DataFrame, np.ndarray]:
    """Load what one split's computations need, in the eigendecomposition's
    protein order.

    Parameters
    ----------
    eigen_path : path
        ``.npz`` with ``d`` (n,), ``P`` (n, n), ``proteins`` (n,).
    labels_path, splits_path : path
        TSVs of labels and of one split (column ``split``), index ``protein``.
    split : str
        The split's id, the column of the split table (``"00"`` is the
        given split).

    Returns
    -------
    d : (n,), P : (n, n), labels : DataFrame (n, t) of 0/1, train_mask : bool (n,)

    Raises
    ------
    ValueError
        If a protein of the network lacks a label row or a split entry, or
        the split column is missing (the file is named).
    """
    with np.load(eigen_path) as f:
        d, P, proteins = f["d"], f["P"], [str(p) for p in f["proteins"]]
    labels = pd.read_csv(labels_path, sep="\t", index_col=0)
    labels.index = labels.index.astype(str)
    splits = pd.read_csv(splits_path, sep="\t", index_col=0, dtype=str)
    splits.index = splits.index.astype(str)
    if split not in splits.columns:
        raise ValueError(f"{splits_path}: no split column {split!r}; found {list(splits.columns)}")
    for name, table in ((labels_path, labels), (splits_path, splits)):
        missing = pd.Index(proteins).difference(table.index)
        if len(missing):
            raise ValueError(f"{name}: {len(missing)} network protein(s) missing, e.g. {list(missing[:3])}")
    train_mask = (splits.loc[proteins, split] == "train").to_numpy()
    return d, P, labels.loc[proteins], train_mask


def load_eigens(eigen_paths, labels_path, splits_path, split: str = "00"
                ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], pd.DataFrame, np.ndarray]:
    """Load one split's inputs with one or several Laplacian eigendecompositions.

    Parameters
    ----------
    eigen_paths : list of paths
        ``.npz`` files written by the workflow's eigen rule, each with
        ``laplacian`` (its kind), ``d``, ``P`` and ``proteins``.
    labels_path, splits_path, split : as in :func:`load_split_inputs`

    Returns
    -------
    eigens : dict laplacian kind -> (d (n,), P (n, n))
    labels : DataFrame (n, t) of 0/1, train_mask : bool (n,)

    Raises
    ------
    ValueError
        If the files disagree on the proteins or their order, repeat a
        Laplacian kind, or lack the ``laplacian`` field (the file is named).
    """
    eigens, labels, train_mask, order = {}, None, None, None
    for path in eigen_paths:
        with np.load(path) as f:
            if "laplacian" not in f:
                raise ValueError(f"{path}: no 'laplacian' field; rerun the eigen rule")
            kind, proteins = str(f["laplacian"]), [str(p) for p in f["proteins"]]
        if kind in eigens:
            raise ValueError(f"{path}: a second eigendecomposition of the {kind} Laplacian")
        if order is not None and proteins != order:
            raise ValueError(f"{path}: proteins differ from those of {eigen_paths[0]}")
        d, P, labels, train_mask = load_split_inputs(path, labels_path, splits_path, split)
        eigens[kind], order = (d, P), proteins
    return eigens, labels, train_mask
