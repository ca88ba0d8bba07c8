"""The drug screen's source and scaling steps as library functions
(studies/drug_screen/source.py, studies/drug_screen/scaling.py): what the
``drug_screen_source`` and ``drug_screen_scaling`` rules compute, on planted
screens whose answers are known or are the documented composition of
already-tested parts."""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd

from biokernels.metrics import mean_r2
from biokernels.scaling import log_spaced_sizes
from biokernels.solvers.ridge import holdout_split
from biokernels.studies.drug_screen import scaling as sc
from biokernels.studies.drug_screen import source as so
from biokernels.studies.drug_screen.protocol import ScreenData, SourceModel, unit_rows
from biokernels.studies.drug_screen.source_fit import MODULE

CFG = {"kernel": {}, "solver": "cholesky", "source_ridge": {"grid": [0.1, 10.0, 1e12], "subset": 100},
       "solver_settings": {"processes": 1, "nodes": 1}}


def _screen(seed=0, n_drugs=60, n_cells=6, d=8, cells: dict | None = None) -> ScreenData:
    """Source pairs on cells 2.. (every drug); target pairs on the cells of
    ``cells`` (cell -> (n seen, n unseen) drugs; drugs < 40 are 'seen'),
    folds i % 5 within each (cell, stratum); one pair 'dropped'."""
    cells = cells if cells is not None else {0: (40, 20)}
    rng = np.random.default_rng(seed)
    rows = [(a, c, "source", "", -1) for c in range(2, n_cells) for a in range(n_drugs)]
    for c, (n_seen, n_unseen) in cells.items():
        rows += [(a, c, "target", "seen", i % 5) for i, a in enumerate(range(n_seen))]
        rows += [(a, c, "target", "unseen", i % 5) for i, a in enumerate(range(40, 40 + n_unseen))]
    rows.append((0, 1, "dropped", "", -1))
    di = np.array([r[0] for r in rows])
    ci = np.array([r[1] for r in rows])
    folds = pd.DataFrame({"pert_id": [f"D{a}" for a in di], "cell_id": [f"C{c}" for c in ci],
                          "role": [r[2] for r in rows], "stratum": [r[3] for r in rows],
                          "fold": [r[4] for r in rows]}, index=[f"D{a}:C{c}" for a, c in zip(di, ci)])
    D = unit_rows(rng.random((n_drugs, 16)) + 0.1, "D")
    C = unit_rows(rng.normal(size=(n_cells, 5)), "C")
    # expression: a smooth function of the drug and the cell, plus noise, so ridges differ
    W = rng.normal(size=(16 + 5, d))
    Y = np.tanh(np.hstack([D[di], C[ci]]) @ W) + 0.05 * rng.normal(size=(len(di), d)) + 5
    return ScreenData(Y=Y, drug_idx=di, cell_idx=ci, D=D, C=C, folds=folds,
                      drugs=pd.Index([f"D{i}" for i in range(n_drugs)]),
                      cells=pd.Index([f"C{i}" for i in range(n_cells)]), genes=pd.Index([f"g{j}" for j in range(d)]))


class _Log:
    """A logger stand-in recording (level, message)."""

    def __init__(self):
        self.lines = []

    def info(self, msg, *a):
        self.lines.append(("info", msg % a))

    def warning(self, msg, *a):
        self.lines.append(("warning", msg % a))


# --------------------------------------------------------------------------- source step


def test_role_positions_split_source_and_target_and_leave_dropped_out():
    data = _screen()
    src, tgt = so.role_positions(data)
    role = data.folds["role"].to_numpy()
    # planted: 4 source cells x 60 drugs, 40 + 20 target pairs, one dropped pair in neither
    assert len(src) == 240 and len(tgt) == 60 and len(src) + len(tgt) == len(role) - 1
    assert (role[src] == "source").all() and (role[tgt] == "target").all()
    assert (np.diff(src) > 0).all() and (np.diff(tgt) > 0).all()  # ascending positions


def test_select_source_ridge_is_the_holdout_of_the_source_model():
    """The documented composition: one holdout split of the source positions
    (holdout_split(n_src, subset, seed)), every grid value scored by the mean
    R² of SourceModel fitted on the training part, the best (smallest on
    ties) chosen. Recomputed here; only run-to-run rounding of threaded
    float32 BLAS may separate the two (~n eps32 ~ 1e-5 relative: rtol 1e-4)."""
    data = _screen()
    src, _ = so.role_positions(data)
    log = _Log()
    lam, table = so.select_source_ridge(data, src, CFG, "cpu", 3, log)
    tr, va = holdout_split(len(src), 100, 3)
    expect = [mean_r2(SourceModel(g, solver="cholesky").fit(data, src[tr]).predict(data, src[va]), data.Y[src[va]])
              for g in CFG["source_ridge"]["grid"]]
    assert list(table.columns) == ["lam", "r2", "chosen"] and table["lam"].tolist() == CFG["source_ridge"]["grid"]
    np.testing.assert_allclose(table["r2"], expect, rtol=1e-4)
    # planted signal: a ridge of 1e12 predicts the training mean profile, which misses the
    # per-pair tanh signal (noise sd 0.05) that the small ridges learn, so it cannot be chosen
    assert lam == CFG["source_ridge"]["grid"][int(np.argmax(expect))] and lam < 1e12
    assert table.loc[table["chosen"], "lam"].tolist() == [lam]
    assert len(log.lines) == 3  # one line per grid value


def test_fit_source_in_process_equals_the_source_model_and_summary_closed_form():
    data = _screen()
    src, tgt = so.role_positions(data)
    fit = so.fit_source(data, src, tgt, 0.1, CFG, "cpu", 0, _Log())
    ref = SourceModel(0.1, solver="cholesky").fit(data, src).predict(data, tgt)
    # the same float32 computation repeated: run-to-run rounding only (see above)
    np.testing.assert_allclose(fit.pred, ref, rtol=1e-5)
    assert fit.processes == 1 and fit.info["solver"] == "cholesky" and fit.fit_seconds >= 0
    # closed form: a prediction equal to the truth has per-pair R² 1 on every target line
    exact = so.SourceFit(pred=data.Y[tgt].copy(), info={"solver": "x", "n": 3, "lam": 0.1, "trace": [1, 2],
                                                        "intercept": np.zeros(8)},
                         fit_seconds=1.5, predict_seconds=0.5, processes=1)
    s = so.source_summary(data, 4, src, tgt, 0.1, exact, "cpu")
    assert s["target_mean_r2_source_only"] == {"C0": 1.0}
    assert (s["n_source"], s["n_source_cells"], s["n_target_pairs"], s["n_genes"]) == (240, 4, 60, 8)
    # only scalar solver entries go to the JSON (a list or an array does not)
    assert s["solver"] == {"solver": "x", "n": 3, "lam": 0.1}
    json.dumps(s)  # serialisable as written
    gct = so.predictions_gct(data, tgt, fit.pred)
    assert gct.data.shape == (8, 60) and list(gct.data.columns) == list(data.folds.index[tgt])
    assert list(gct.col_meta.columns) == ["pert_id", "cell_id", "stratum"]
    np.testing.assert_array_equal(gct.data.to_numpy(), fit.pred.T)  # genes x pairs, values unchanged


def test_fit_source_distributed_runs_the_command_and_reads_back(tmp_path, monkeypatch):
    """processes x nodes > 1: the command is distributed_command's, with the
    inputs in load_screen's order, the ridge, threads shared per node; stale
    outputs are removed before the run and what the processes write is
    returned. The run itself is planted (a fake run_logged that writes the
    files); the real torchrun path runs in the workflow test."""
    import biokernels.logs

    data = _screen()
    src, tgt = so.role_positions(data)
    cfg = {**CFG, "solver_settings": {"processes": 2, "nodes": 1}}
    inputs = {k: f"/in/{k}" for k in so.SCREEN_INPUTS}
    work = tmp_path / "work"
    work.mkdir()
    np.save(work / "predictions.npy", np.zeros(1))  # a stale file from an earlier run
    planted = np.arange(len(tgt) * 8, dtype=np.float64).reshape(len(tgt), 8)
    seen = {}

    def fake_run(cmd, log):
        seen["cmd"] = cmd
        assert not (work / "predictions.npy").exists()  # stale outputs removed first
        np.save(work / "predictions.npy", planted)
        (work / "info.json").write_text(json.dumps({"solver": "nystrom", "centres": 7}))

    monkeypatch.setattr(biokernels.logs, "run_logged", fake_run)
    fit = so.fit_source(data, src, tgt, 0.25, cfg, "cuda:0", 5, _Log(), inputs=inputs, work=work, threads=8)
    np.testing.assert_array_equal(fit.pred, planted)
    assert fit.info == {"solver": "nystrom", "centres": 7} and fit.processes == 2 and fit.predict_seconds == 0.0
    cmd = seen["cmd"]
    assert "--standalone" in cmd and "--nproc-per-node=2" in cmd  # one node: torchrun standalone
    args = cmd[cmd.index(MODULE) + 1:]  # the module's own arguments follow its name
    assert args[:8] == ["--expression", "/in/expression", "--controls", "/in/controls", "--fingerprints",
                        "/in/fingerprints", "--folds", "/in/folds"]
    opt = dict(zip(args[8::2], args[9::2]))
    assert opt == {"--out": str(work), "--lam": "0.25", "--config": str(work / "config.json"), "--device": "cuda",
                   "--seed": "5", "--threads": "4"}  # 8 threads shared by 2 processes
    assert json.loads((work / "config.json").read_text()) == cfg


# --------------------------------------------------------------------------- scaling step


def test_training_sizes_closed_form():
    # k = 5 (folds 0..4): a line with m pairs has floor(4 m / 5) in its smallest training split
    data = _screen(cells={0: (12, 5), 1: (5, 0)})
    folds = data.folds[data.folds["role"] == "target"]
    seen = sc.training_sizes(folds, ["C0", "C1"], "seen")
    unseen = sc.training_sizes(folds, ["C1", "C0"], "unseen")
    assert seen.to_dict() == {"C0": 9, "C1": 4}
    assert list(unseen.index) == ["C1", "C0"] and unseen.to_dict() == {"C1": 0, "C0": 4}  # no pairs: 0


def test_shared_sizes_cap_at_the_smallest_eligible_line():
    n_train = pd.Series({"A": 40, "B": 20, "C": 4})
    eligible, sizes = sc.shared_sizes(n_train, n_min=2, n_points=4)
    # C has 4 < n_min + n_points - 1 = 5 pairs: out; the grid ends at B's 20, the smallest left
    assert eligible == ["A", "B"] and sizes == log_spaced_sizes(20, 4, n_min=2)
    assert sizes[0] == 2 and sizes[-1] == 20 and len(sizes) == 4
    assert sc.shared_sizes(pd.Series({"A": 4}), n_min=2, n_points=4) == ([], [])


def test_scaling_target_shares_sizes_and_leaves_small_lines_out():
    """Planted: C0 has 40 seen / 20 unseen pairs, C1 10 seen / 3 unseen. Seen
    sizes are shared, capped by C1's floor(10 * 4 / 5) = 8; C1 has 2 < 5
    unseen training pairs, so it is left out of the unseen curve with a
    warning. The rows are scaling_cell's with those sizes (the documented
    composition; float64 kernel ridge repeated, rtol 1e-10 for threaded BLAS)."""
    data = _screen(cells={0: (40, 20), 1: (10, 3)})
    src, tgt = so.role_positions(data)
    mu = data.Y[src].mean(axis=0)
    f_s = pd.DataFrame(data.Y[tgt] - 0.5, index=data.folds.index[tgt])
    lams = {"baseline": 0.1, "projection_translation": 0.1}
    cfg = {"n_min": 2, "n_points": 4, "seeds": 2}
    seen_sizes, unseen_sizes = log_spaced_sizes(8, 4, n_min=2), log_spaced_sizes(16, 4, n_min=2)
    log = _Log()
    t0 = sc.scaling_target(data, f_s, mu, ["C0", "C1"], "C0", lams, cfg, 7, {}, "cpu", log)
    expect = pd.concat([sc.scaling_cell(data, f_s, mu, "C0", lams, seen_sizes, [7, 8], {}, "cpu", strata=("seen",)),
                        sc.scaling_cell(data, f_s, mu, "C0", lams, unseen_sizes, [7, 8], {}, "cpu",
                                        strata=("unseen",))], ignore_index=True)
    pd.testing.assert_frame_equal(t0, expect, check_exact=False, rtol=1e-10)
    assert sorted(set(t0.loc[t0["stratum"] == "seen", "n_train"])) == seen_sizes  # capped by C1
    assert list(t0.columns) == sc.COLUMNS and set(t0["seed"]) == {7, 8}
    t1 = sc.scaling_target(data, f_s, mu, ["C0", "C1"], "C1", lams, cfg, 7, {}, "cpu", log)
    assert set(t1["stratum"]) == {"seen"} and sorted(set(t1["n_train"])) == seen_sizes
    assert any(lvl == "warning" and "C1 unseen" in msg and "left out of the unseen curve" in msg
               for lvl, msg in log.lines)
    # a line too small for both strata: an empty table with the columns
    empty = sc.scaling_target(data, f_s, mu, ["C0", "C1"], "C1", lams, {**cfg, "n_points": 8}, 7, {}, "cpu")
    assert empty.empty and list(empty.columns) == sc.COLUMNS


def test_scaling_logger_is_optional(caplog):
    """log=None runs silently (the library does not require a logger)."""
    data = _screen(cells={0: (10, 0)})
    src, tgt = so.role_positions(data)
    f_s = pd.DataFrame(data.Y[tgt], index=data.folds.index[tgt])
    with caplog.at_level(logging.WARNING):
        t = sc.scaling_target(data, f_s, data.Y[src].mean(axis=0), ["C0"], "C0",
                              {"baseline": 0.1, "projection_translation": 0.1}, {"n_min": 2, "n_points": 4,
                                                                                 "seeds": 1}, 0)
    # 10 seen pairs -> 8 per training split: 4 sizes from 2 to 8; 3 models (mean, baseline,
    # projection_translation) x 5 folds x 4 sizes x 1 seed; no unseen pairs: no unseen rows
    assert len(t) == 3 * 5 * 4 and set(t["stratum"]) == {"seen"} and not caplog.records
