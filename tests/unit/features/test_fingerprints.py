"""Morgan fingerprints and Mol2Vec from SMILES (biokernels.features.fingerprints)."""

import logging
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rdkit import Chem, RDLogger, rdBase
from rdkit.Chem import AllChem, rdFingerprintGenerator

from biokernels.features.fingerprints import mol2vec_embeddings, mol2vec_sentence, morgan_fingerprints
from biokernels.errors import InputError

SHARED_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
GCTX = SHARED_DATA / "l1000_cmapR_modzs_n272x978" / "modzs_n272x978.gctx"
PERTINFO = SHARED_DATA / "lincs_metadata_dhimmel" / "pertinfo.tsv.gz"

KNOWN = {"ethanol": "CCO", "methanol": "CO", "benzene": "c1ccccc1", "aspirin": "CC(=O)Oc1ccccc1C(=O)O",
         "caffeine": "Cn1cnc2c1c(=O)n(C)c(=O)n2C"}
HAS_LEGACY = hasattr(AllChem, "GetMorganFingerprintAsBitVect")


def _legacy_on_bits(mol, radius, n_bits):
    with warnings.catch_warnings(), rdBase.BlockLogs():
        warnings.simplefilter("ignore")
        return list(AllChem.GetMorganFingerprintAsBitVect(mol, radius, nBits=n_bits).GetOnBits())


def test_bits_match_rdkit_generator_and_legacy_api():
    bits, invalid = morgan_fingerprints(pd.Series(KNOWN))
    assert invalid.empty and bits.shape == (5, 1024) and bits.dtypes.eq(np.uint8).all()
    assert list(bits.columns[[0, -1]]) == ["morgan_0", "morgan_1023"] and list(bits.index) == list(KNOWN)
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024)
    for name, smi in KNOWN.items():
        mol = Chem.MolFromSmiles(smi)
        on = list(np.flatnonzero(bits.loc[name].to_numpy()))
        assert on == list(generator.GetFingerprint(mol).GetOnBits())
        if HAS_LEGACY:  # the deprecated API, computed separately
            assert on == _legacy_on_bits(mol, 2, 1024)
    # other sizes pass through
    small, _ = morgan_fingerprints(pd.Series(KNOWN), radius=1, n_bits=64)
    if HAS_LEGACY:
        aspirin = Chem.MolFromSmiles(KNOWN["aspirin"])
        assert list(np.flatnonzero(small.loc["aspirin"])) == _legacy_on_bits(aspirin, 1, 64)


def test_bit_counts_follow_from_symmetry():
    bits, _ = morgan_fingerprints(pd.Series(KNOWN))
    n_on = bits.sum(axis=1)
    # benzene: all 6 atoms are equivalent, so one environment per radius 0, 1, 2
    assert n_on["benzene"] == 3
    # methanol: C and O at radius 0; their radius-1 environments are the same
    # bond, kept once; radius 2 adds nothing -> 3. Ethanol: 3 atoms x radius 0
    # and 1, radius 2 repeats the whole molecule -> 6.
    assert n_on["methanol"] == 3 and n_on["ethanol"] == 6
    assert not bits.loc["ethanol"].equals(bits.loc["methanol"])
    assert n_on["aspirin"] > n_on["benzene"]


def test_invalid_smiles_are_reported():
    smiles = pd.Series({"ok": "CCO", "ring": "C1CC", "empty": "", "missing": np.nan, "junk": "xyz",
                        "valence": "C(C)(C)(C)(C)C", "kekule": "c1cccc1", "number": 5})
    bits, invalid = morgan_fingerprints(smiles)
    assert list(bits.index) == ["ok"]
    reasons = dict(zip(invalid["id"], invalid["reason"]))
    assert list(invalid["id"]) == ["ring", "empty", "missing", "junk", "valence", "kekule", "number"]
    assert reasons["ring"].startswith("RDKit cannot parse") and reasons["junk"].startswith("RDKit cannot parse")
    assert reasons["empty"] == "empty SMILES" and reasons["missing"] == "missing SMILES"
    assert "Explicit valence" in reasons["valence"] and "kekulize" in reasons["kekule"]
    assert reasons["number"] == "not a string (int)"
    assert invalid.set_index("id").loc["ring", "smiles"] == "C1CC"


def test_all_invalid_and_bad_arguments_raise():
    with pytest.raises(InputError, match=r"none of the 3 SMILES is valid \(id 'a': RDKit cannot parse"):
        morgan_fingerprints(pd.Series({"a": "C1CC", "b": "", "c": None}))
    with pytest.raises(InputError, match="duplicated compound id"):
        morgan_fingerprints(pd.Series(["C", "CC"], index=["x", "x"]))
    with pytest.raises(InputError, match="expected a pandas Series"):
        morgan_fingerprints(["CCO"])
    with pytest.raises(InputError, match="n_bits must be an integer >= 1"):
        morgan_fingerprints(pd.Series({"a": "C"}), n_bits=0)


def _log_status() -> dict[str, bool]:
    return {k: v == "enabled" for k, v in (line.split(":") for line in rdBase.LogStatus().splitlines())}


def test_no_deprecation_warnings_and_no_rdkit_log(caplog):
    status = _log_status()
    rdBase.LogToPythonLogger()  # RDKit's C++ log -> Python logger "rdkit", seen by caplog
    try:
        with caplog.at_level(logging.DEBUG, logger="rdkit"):
            if HAS_LEGACY:  # positive control: this capture does see RDKit's deprecation notice
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    AllChem.GetMorganFingerprintAsBitVect(Chem.MolFromSmiles("CCO"), 2, nBits=64)
                assert any("DEPRECAT" in r.getMessage().upper() for r in caplog.records)
                caplog.clear()
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                morgan_fingerprints(pd.Series({"a": "CCO", "b": "C1CC", "c": "xyz", "d": "c1cccc1"}))
                mol2vec_sentence("CCO")
        assert [r.getMessage() for r in caplog.records] == []  # no deprecation, parse errors blocked
    finally:
        rdBase.LogToCppStreams()
        for level, enabled in status.items():
            (RDLogger.EnableLog if enabled else RDLogger.DisableLog)(level)


@pytest.mark.skipif(not (GCTX.is_file() and PERTINFO.is_file()), reason="real L1000 / LINCS metadata not found")
def test_real_l1000_compounds():
    from biokernels.io.gctx import read_gctx_meta
    col = read_gctx_meta(GCTX, "col")
    perts = col.drop_duplicates("pert_id").set_index("pert_id")["pert_iname"]
    info = pd.read_csv(PERTINFO, sep="\t", usecols=["pert_id", "canonical_smiles"]).set_index("pert_id")
    smiles = info["canonical_smiles"].reindex(perts.index)
    bits, invalid = morgan_fingerprints(smiles)
    # dhimmel's pertinfo has no SMILES for 2 of the 6 pert_id batches
    assert sorted(invalid["id"]) == ["BRD-U73308409", "BRD-U88459701"]
    assert set(invalid["reason"]) == {"missing SMILES"}
    assert len(bits) == 4 and set(perts[bits.index]) == {"atorvastatin", "vemurafenib", "venlafaxine"}
    # the two atorvastatin SMILES differ only in stereo, which Morgan bits ignore
    atorva = bits[perts[bits.index] == "atorvastatin"]
    assert len(atorva) == 2 and atorva.iloc[0].equals(atorva.iloc[1])
    # the three drugs have distinct fingerprints
    assert len(bits.drop_duplicates()) == 3 and (bits.sum(axis=1) > 20).all()


# ------------------------------------------------------------------ Mol2Vec

def test_mol2vec_sentences_by_hand():
    # Radius-0 identifiers are RDKit's hashes of the ECFP atom invariants:
    # CH3- 2246728737, -CH2- 2245384272, -OH 864662311, CH4 2246733040 (the
    # ids in mol2vec's vocabulary). A sentence lists, atom by atom, the ids
    # of radius 0 then 1; an environment repeating a smaller one is skipped.
    assert mol2vec_sentence("C") == ["2246733040"]  # radius 1 adds no bond
    cc = mol2vec_sentence("CC")
    assert cc[0] == cc[2] == "2246728737" and len(cc) == 3  # 2nd atom's radius-1 env = the 1st's
    cco = mol2vec_sentence("CCO")
    assert cco[0::2] == ["2246728737", "2245384272", "864662311"] and len(cco) == 6
    assert mol2vec_sentence("CCO", radius=0) == cco[0::2]
    assert cco == ["2246728737", "3542456614", "2245384272", "4018048386", "864662311", "1535166686"]


@pytest.mark.skipif(not hasattr(AllChem, "GetMorganFingerprint"), reason="legacy RDKit Morgan API removed")
def test_mol2vec_sentence_matches_mol2alt_sentence():
    # mol2vec's mol2alt_sentence, on the legacy API
    def mol2alt_sentence(mol, radius):
        info = {}
        with warnings.catch_warnings(), rdBase.BlockLogs():
            warnings.simplefilter("ignore")
            AllChem.GetMorganFingerprint(mol, radius, bitInfo=info)
        atoms = {a.GetIdx(): {r: None for r in range(radius + 1)} for a in mol.GetAtoms()}
        for element, places in info.items():
            for atom, r in places:
                atoms[atom][r] = element
        return [str(x) for atom in atoms for r in range(radius + 1) if (x := atoms[atom][r])]

    for smi in KNOWN.values():
        mol = Chem.MolFromSmiles(smi)
        for radius in (1, 2):
            assert mol2vec_sentence(mol, radius) == mol2alt_sentence(mol, radius)


class _Vectors(dict):
    """The KeyedVectors interface used: ``in``, ``[]``, ``vector_size``."""
    vector_size = 2


def test_mol2vec_sum_with_unseen_vector():
    kv = _Vectors({"2246728737": np.array([1.0, 0.0]), "2245384272": np.array([0.0, 1.0]),
                   "UNK": np.array([10.0, 10.0])})
    emb, invalid = mol2vec_embeddings(pd.Series({"etoh": "CCO", "bad": "C1CC"}), kv)
    # CCO's 6 words: 2 known, 4 unknown -> [1,0] + [0,1] + 4 * [10,10]
    np.testing.assert_array_equal(emb.loc["etoh"], [41.0, 41.0])
    assert list(emb.columns) == ["mol2vec_0", "mol2vec_1"] and list(invalid["id"]) == ["bad"]
    emb0, _ = mol2vec_embeddings(pd.Series({"etoh": "CCO"}), kv, unseen=None)
    np.testing.assert_array_equal(emb0.loc["etoh"], [1.0, 1.0])
    kv.pop("UNK")  # no unseen vector in the model -> zero
    np.testing.assert_array_equal(mol2vec_embeddings(pd.Series({"e": "CCO"}), kv)[0].loc["e"], [1.0, 1.0])


def test_mol2vec_without_gensim_explains(tmp_path):
    try:
        import gensim  # noqa: F401
        pytest.skip("gensim is installed")
    except ImportError:
        pass
    with pytest.raises(ImportError, match=r"need gensim.*model_300dim\.pkl"):
        mol2vec_embeddings(pd.Series({"a": "CCO"}), tmp_path / "model_300dim.pkl")


def test_mol2vec_with_a_tiny_gensim_model(tmp_path):
    gensim = pytest.importorskip("gensim")
    smiles = {k: v for k, v in KNOWN.items()}
    sentences = [mol2vec_sentence(s) for s in smiles.values()] + [["UNK"]]
    model = gensim.models.Word2Vec(sentences, vector_size=8, min_count=1, window=3, seed=1, workers=1, epochs=2)
    path = tmp_path / "tiny.model"
    model.save(str(path))
    emb, invalid = mol2vec_embeddings(pd.Series(smiles | {"propanol": "CCCO"}), path)
    assert invalid.empty and emb.shape == (6, 8)
    # both sides add the same float32 word vectors in float64 (exact terms, perhaps in
    # another order): rounding ~n eps64 sum|v|, far below rtol 1e-6
    for name, smi in smiles.items():
        expected = np.sum([model.wv[w] for w in mol2vec_sentence(smi)], axis=0, dtype=np.float64)
        np.testing.assert_allclose(emb.loc[name], expected, rtol=1e-6)
    words = mol2vec_sentence("CCCO")
    expected = np.sum([model.wv[w] if w in model.wv else model.wv["UNK"] for w in words], axis=0, dtype=np.float64)
    assert any(w not in model.wv for w in words)
    np.testing.assert_allclose(emb.loc["propanol"], expected, rtol=1e-6)
