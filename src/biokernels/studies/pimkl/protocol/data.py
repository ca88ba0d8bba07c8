"""PIMKL study inputs for the workflow: the interaction network and the
labelled cohorts of a source (through the format registries of
:mod:`biokernels.io.networks` and :mod:`biokernels.io.cohorts`), and the
per-cohort weight tables the workflow writes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


#: The PIMKL study's defaults per network format, below the source's own
#: settings: its ``edgelist`` files carry a ``weight`` column (the generated
#: default network; the readers' own default is unweighted).
NETWORK_DEFAULTS = {"edgelist": {"weight_col": "weight"}}


def load_network(spec: dict) -> tuple[pd.DataFrame, dict]:
    """Read the interaction network of a PIMKL source.

    Parameters
    ----------
    spec : dict
        ``format``: a key of :data:`biokernels.io.networks.NETWORK_READERS`
        (``"string"``, ``"sif"``, ``"edgelist"``, ``"gem"``, ``"biogrid"``); ``path``: the file;
        every other key is a setting of that format's reader (e.g.
        ``score_threshold`` of ``"string"`` on STRING's 0-1000 scale,
        ``interaction_types`` of ``"sif"``), over :data:`NETWORK_DEFAULTS`.

    Returns
    -------
    edges : DataFrame ``protein_a < protein_b``, ``weight``
    counts : dict (the reader's counts)

    Raises
    ------
    InputError
        Unknown format (the known ones are listed), a setting the reader
        does not take, or whatever the reader raises.
    """
    from biokernels.io.networks import NETWORK_READERS
    from biokernels.registry import call, lookup

    fmt = spec.get("format")
    reader = lookup(NETWORK_READERS, fmt, "network format")
    settings = {**NETWORK_DEFAULTS.get(fmt, {}), **{k: v for k, v in spec.items() if k not in ("format", "path")}}
    return call(reader, settings, f"network ({fmt})", spec["path"])


def load_cohort(spec: dict, collapse: str = "max_mean", name: str = "<cohort>"
                ) -> tuple[pd.DataFrame, pd.Series, dict]:
    """Read one labelled cohort of a PIMKL source.

    Parameters
    ----------
    spec : dict
        ``format``: a key of :data:`biokernels.io.cohorts.COHORT_READERS`;
        every other key is a keyword argument of that format's reader:

        * ``"tsv"``: ``expression_path`` (samples x genes), ``labels_path``,
          optional ``cna_path`` (:func:`biokernels.io.cohorts.load_tsv_cohort`);
        * ``"vdxs"``: genefu vdxs files ``expression_path``,
          ``annotation_path``, ``clinical_path``, optional ``series``
          (default ``"VDX"`` = GSE2034), ``endpoint`` (default ``"rfs"``)
          (:func:`~biokernels.io.cohorts.load_vdxs_cohort`);
        * ``"arff"``: scikit-survival GSE7390 ``arff_path``, optional
          ``annotation_path`` (probe -> HUGO symbol, e.g. vdxs' annotation;
          without it the probes stay columns)
          (:func:`~biokernels.io.cohorts.load_arff_cohort`);
        * ``"geo_series_matrix"``: a GEO series matrix
          ``series_matrix_path`` and platform annotation ``platform_path``,
          the survival fields (``time_key``/``time_regex``,
          ``event_key``/``event_regex``, ``time_unit``, optional
          ``clinical_path``) and the probe and missing-value rules
          (:func:`~biokernels.io.cohorts.load_geo_series_matrix_cohort`).
    collapse : {"max_mean", "mean"}
        Probe collapse of the microarray formats (ignored for ``"tsv"``).
    name : str
        Cohort name, for messages.

    Returns
    -------
    X : DataFrame (n_samples, n_genes), float64
    y : Series int64 0/1 aligned with ``X``
    counts : dict (the reader's counts; ``"cna"``: a DataFrame aligned with
        ``X`` when the spec has ``cna_path``; ``"has_probes"``: bool)

    Raises
    ------
    InputError
        Unknown format (the known ones are listed), a key the format does
        not take, NaN values, mismatched sample ids, ... (the readers').
    """
    from biokernels.io.cohorts import COHORT_READERS
    from biokernels.registry import call, lookup

    reader = lookup(COHORT_READERS, spec.get("format"), f"cohort {name!r}: format")
    settings = {k: v for k, v in spec.items() if k != "format"}
    return call(reader, settings, f"cohort {name!r}", collapse=collapse, name=name)


def read_weights(paths: list[str | Path]) -> pd.DataFrame:
    """Concatenate per-cohort weight tables (TSV) written by the workflow."""
    return pd.concat([pd.read_csv(p, sep="\t") for p in paths], ignore_index=True)
