"""Compound features from SMILES: Morgan (ECFP-like) bits and Mol2Vec.

SMILES are parsed with RDKit (``Chem.MolFromSmiles``, with sanitization);
RDKit's own error logging is blocked while parsing and every SMILES that is
missing, empty or rejected is reported in an ``invalid`` table with the
reason, never dropped silently.

* Morgan fingerprints (Rogers & Hahn 2010, "Extended-connectivity
  fingerprints", J. Chem. Inf. Model. 50:742) with RDKit's
  ``rdFingerprintGenerator.GetMorganGenerator`` (the API that replaces the
  deprecated ``AllChem.GetMorganFingerprintAsBitVect``; same bits).
* Mol2Vec (Jaeger, Fulle & Turk 2018, J. Chem. Inf. Model. 58:27): a
  molecule's "sentence" is, atom by atom, its Morgan identifiers of radius
  0..r (mol2vec's ``mol2alt_sentence``); its vector is the sum of the word
  vectors of a trained gensim Word2Vec model (mol2vec's ``sentences2vec``).
"""

from __future__ import annotations

import numbers
import os
from pathlib import Path

import numpy as np
import pandas as pd
from rdkit import Chem, rdBase
from rdkit.Chem import rdFingerprintGenerator

from biokernels.errors import InputError

_GENSIM_HELP = ("Mol2Vec embeddings need gensim (pip install gensim; not a dependency of biokernels) "
                "and a trained Mol2Vec Word2Vec model file, e.g. model_300dim.pkl from "
                "github.com/samoturk/mol2vec (examples/models)")


def _mol_or_reason(value) -> tuple[Chem.Mol | None, str | None]:
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None, "missing SMILES"
    if not isinstance(value, str):
        return None, f"not a string ({type(value).__name__})"
    text = value.strip()
    if not text:
        return None, "empty SMILES"
    with rdBase.BlockLogs():  # RDKit's C++ error log; the reason is reported here instead
        mol = Chem.MolFromSmiles(text)
        if mol is not None:
            return mol, None
        raw = Chem.MolFromSmiles(text, sanitize=False)
        if raw is None:
            return None, "RDKit cannot parse the SMILES (syntax error, e.g. an unclosed ring or unknown atom)"
        problems = [p.Message() for p in Chem.DetectChemistryProblems(raw)]
    return None, "RDKit sanitization failed" + (f": {'; '.join(problems)}" if problems else "")


def parse_smiles(smiles: pd.Series) -> tuple[dict, pd.DataFrame]:
    """Parse SMILES with RDKit, reporting every one that fails.

    Parameters
    ----------
    smiles : Series of str
        SMILES indexed by compound id (ids unique).

    Returns
    -------
    mols : dict
        id -> sanitized ``rdkit.Chem.Mol``, in input order, for the valid ones.
    invalid : DataFrame with columns ``id``, ``smiles``, ``reason``
        One row per SMILES that is missing (NaN/None), not a string, empty,
        unparseable (syntax) or fails sanitization (RDKit's message, e.g.
        valence or kekulization).

    Raises
    ------
    InputError
        If ``smiles`` is not a Series, is empty, or has duplicated ids.
    """
    if not isinstance(smiles, pd.Series):
        raise InputError(f"expected a pandas Series of SMILES indexed by compound id, got {type(smiles).__name__}")
    if smiles.empty:
        raise InputError("no SMILES given (empty Series)")
    dup = smiles.index[smiles.index.duplicated()].unique()
    if len(dup):
        raise InputError(f"{len(dup)} duplicated compound id(s) among the SMILES: {list(dup[:5])}")
    mols, invalid = {}, []
    for cid, value in smiles.items():
        mol, reason = _mol_or_reason(value)
        if mol is None:
            invalid.append((cid, value, reason))
        else:
            mols[cid] = mol
    return mols, pd.DataFrame(invalid, columns=["id", "smiles", "reason"])


def _require_valid(mols: dict, invalid: pd.DataFrame, n: int) -> None:
    if not mols:
        examples = "; ".join(f"id {r.id!r}: {r.reason}" for r in invalid.head(5).itertuples())
        raise InputError(f"none of the {n} SMILES is valid ({examples})")


def _check_int(name: str, value, minimum: int) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def morgan_fingerprints(smiles: pd.Series, radius: int = 2, n_bits: int = 1024) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Folded Morgan fingerprint bits (ECFP4-like at radius 2).

    Parameters
    ----------
    smiles : Series of str, length n
        SMILES indexed by compound id (unique).
    radius : int
        Morgan radius (2 ~ ECFP4).
    n_bits : int
        Fingerprint length.

    Returns
    -------
    bits : DataFrame, uint8, shape (n_valid, n_bits)
        0/1, indexed by the valid ids in input order, columns
        ``morgan_0`` .. ``morgan_{n_bits-1}``. RDKit's
        ``GetMorganGenerator(radius=radius, fpSize=n_bits)`` defaults: atom
        invariants (ECFP), bond types used, chirality ignored.
    invalid : DataFrame with columns ``id``, ``smiles``, ``reason``
        Every SMILES left out (see :func:`parse_smiles`).

    Raises
    ------
    InputError
        If the input is not a non-empty Series with unique ids, ``radius`` or
        ``n_bits`` is not a valid integer, or no SMILES is valid.
    """
    radius = _check_int("radius", radius, 0)
    n_bits = _check_int("n_bits", n_bits, 1)
    mols, invalid = parse_smiles(smiles)
    _require_valid(mols, invalid, len(smiles))
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=n_bits)
    bits = np.zeros((len(mols), n_bits), dtype=np.uint8)
    for i, mol in enumerate(mols.values()):
        bits[i] = generator.GetFingerprintAsNumPy(mol)
    index = pd.Index(list(mols), name=smiles.index.name)
    return pd.DataFrame(bits, index=index, columns=[f"morgan_{j}" for j in range(n_bits)]), invalid


def mol2vec_sentence(mol: Chem.Mol | str, radius: int = 1) -> list[str]:
    """A molecule's Mol2Vec "sentence" (mol2vec's ``mol2alt_sentence``).

    For each atom in atom order, the unfolded Morgan identifiers of the
    environments centred on it at radius 0, 1, ..., ``radius``, as strings;
    an environment that repeats a smaller one (same atoms and bonds) is not
    an identifier of its own in RDKit and is skipped, as in mol2vec.

    Parameters
    ----------
    mol : rdkit.Chem.Mol or str
        Molecule or SMILES.
    radius : int
        Largest radius (Mol2Vec's pretrained model uses 1).

    Returns
    -------
    list of str
        At most ``n_atoms * (radius + 1)`` identifiers (32-bit unsigned
        integers, identical to those of ``AllChem.GetMorganFingerprint``).

    Raises
    ------
    InputError
        If a SMILES is invalid or ``radius`` is not a non-negative integer.
    """
    radius = _check_int("radius", radius, 0)
    if not isinstance(mol, Chem.Mol):
        parsed, reason = _mol_or_reason(mol)
        if parsed is None:
            raise InputError(f"SMILES {mol!r}: {reason}")
        mol = parsed
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=radius)
    output = rdFingerprintGenerator.AdditionalOutput()
    output.AllocateBitInfoMap()
    generator.GetSparseCountFingerprint(mol, additionalOutput=output)
    by_atom: dict[int, dict[int, int]] = {a.GetIdx(): {} for a in mol.GetAtoms()}
    for identifier, places in output.GetBitInfoMap().items():
        for atom, r in places:
            by_atom[atom][r] = identifier
    return [str(by_atom[atom][r]) for atom in sorted(by_atom) for r in range(radius + 1) if r in by_atom[atom]]


def _word_vectors(model):
    """A KeyedVectors-like object (``in``, ``[]``, ``vector_size``)."""
    if isinstance(model, (str, os.PathLike)):
        try:
            from gensim.utils import SaveLoad
        except ImportError:
            raise ImportError(_GENSIM_HELP) from None
        path = Path(model)
        if not path.is_file():
            raise InputError(f"{path}: expected a Mol2Vec (gensim Word2Vec) model file, found nothing. {_GENSIM_HELP}")
        model = SaveLoad.load(str(path))  # Word2Vec or KeyedVectors pickle, with gensim's compatibility fixes
    vectors = getattr(model, "wv", model)
    if not all(hasattr(vectors, a) for a in ("__contains__", "__getitem__", "vector_size")):
        raise InputError(f"expected a gensim Word2Vec model or KeyedVectors, got {type(model).__name__}")
    return vectors


def mol2vec_embeddings(smiles: pd.Series, model_path, radius: int = 1,
                       unseen: str | None = "UNK") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Mol2Vec embeddings: the sum of a molecule's word vectors.

    Parameters
    ----------
    smiles : Series of str, length n
        SMILES indexed by compound id (unique).
    model_path : path or model
        A gensim Word2Vec/KeyedVectors file (e.g. ``model_300dim.pkl`` of
        samoturk/mol2vec, trained on ZINC and ChEMBL with radius 1), or an
        already loaded Word2Vec / KeyedVectors.
    radius : int
        Radius of the sentences; must match the model's training (1 for
        the published model).
    unseen : str or None
        Word whose vector replaces identifiers missing from the vocabulary
        (``"UNK"`` in the published model); when None or absent from the
        model, missing identifiers add zero.

    Returns
    -------
    embeddings : DataFrame, float64, shape (n_valid, dim)
        Indexed by the valid ids, columns ``mol2vec_0`` .. ``mol2vec_{dim-1}``.
        Each row is the sum over the molecule's sentence
        (:func:`mol2vec_sentence`, repeats counted) of the word vectors, as
        mol2vec's ``sentences2vec``.
    invalid : DataFrame with columns ``id``, ``smiles``, ``reason``
        As :func:`parse_smiles`.

    Raises
    ------
    ImportError
        If a path is given and gensim is not installed.
    InputError
        If the model file is missing or not word vectors, the input is not a
        non-empty Series with unique ids, or no SMILES is valid.
    """
    radius = _check_int("radius", radius, 0)
    vectors = _word_vectors(model_path)
    mols, invalid = parse_smiles(smiles)
    _require_valid(mols, invalid, len(smiles))
    dim = int(vectors.vector_size)
    fallback = (np.asarray(vectors[unseen], dtype=np.float64) if unseen is not None and unseen in vectors
                else np.zeros(dim))
    out = np.zeros((len(mols), dim))
    for i, mol in enumerate(mols.values()):
        for word in mol2vec_sentence(mol, radius):
            out[i] += np.asarray(vectors[word], dtype=np.float64) if word in vectors else fallback
    index = pd.Index(list(mols), name=smiles.index.name)
    return pd.DataFrame(out, index=index, columns=[f"mol2vec_{j}" for j in range(dim)]), invalid
