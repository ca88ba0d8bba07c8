"""The source model fitted by several processes: the entry point of a distributed solve.

Launched by :func:`distributed_command` (torchrun on one node; srun +
torchrun across the nodes of a SLURM allocation), every process loads the
same preprocessed screen, joins the process group
(:func:`biokernels.distributed.init_from_env`: NCCL between GPUs, gloo on
CPUs), and runs :class:`biokernels.studies.drug_screen.protocol.SourceModel`
with a matrix-free solver whose rows are split between the processes; the
predictions for the target pairs are gathered and rank 0 writes them
(``predictions.npy``, float64 (n_target, genes), rows in the order of the
target pairs in the folds table) and the solver's ``info.json`` into
``--out``, through temporary names, so a killed run leaves nothing that looks
finished.

Usage (what the ``drug_screen_source`` rule runs when
``drug_screen.solver_settings.processes * nodes > 1``)::

    python -m torch.distributed.run --standalone --nproc-per-node 2 \\
        -m biokernels.studies.drug_screen.source_fit --expression ... --out DIR
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
from pathlib import Path

import numpy as np

MODULE = "biokernels.studies.drug_screen.source_fit"


def distributed_command(args: list[str], processes: int, nodes: int = 1, python: str | None = None,
                        port: int = 29500) -> list[str]:
    """The command that runs :data:`MODULE` with ``processes`` per node on ``nodes`` nodes.

    Parameters
    ----------
    args : list of str, the arguments of this module (``--expression`` ...)
    processes : int >= 1, processes per node (one per GPU on GPU nodes)
    nodes : int >= 1; above 1 the command must run inside a SLURM allocation
        of that many nodes: ``srun`` starts one torchrun per node, which meet
        at the first node (c10d rendezvous, ``$SLURM_JOB_ID`` as its id)
    python : the interpreter (default ``sys.executable``)
    port : rendezvous port across nodes

    Returns
    -------
    list of str (argv)

    Raises
    ------
    ValueError
        processes or nodes < 1.

    Source: ``torch.distributed.run`` (torchrun; library) and SLURM ``srun``.
    """
    if not (isinstance(processes, int) and processes >= 1 and isinstance(nodes, int) and nodes >= 1):
        raise ValueError(f"processes and nodes must be ints >= 1, got {processes!r} and {nodes!r}")
    py = python or sys.executable
    run = [py, "-m", "torch.distributed.run", f"--nproc-per-node={processes}"]
    if nodes == 1:
        return run[:3] + ["--standalone"] + run[3:] + ["-m", MODULE, *args]
    host = "$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)"
    inner = " ".join(run + [f"--nnodes={nodes}", "--rdzv-backend=c10d", f"--rdzv-endpoint={host}:{port}",
                            "--rdzv-id=$SLURM_JOB_ID", "-m", MODULE] + [shlex.quote(a) for a in args])
    return ["srun", f"--nodes={nodes}", "--ntasks-per-node=1", "bash", "-c", inner]


def _atomic_save(path: Path, writer) -> None:
    tmp = path.with_name(path.name + ".part")
    writer(tmp)
    os.replace(tmp, path)


def main(argv=None) -> int:
    """Fit the source model on every source pair and predict the target
    pairs, as one process of a distributed run (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("expression", "controls", "fingerprints", "folds", "out"):
        ap.add_argument(f"--{name}", required=True)
    ap.add_argument("--lam", type=float, required=True)
    ap.add_argument("--config", required=True, help="JSON: kernel, solver, solver_settings")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=0, help="torch threads per process (0: leave)")
    a = ap.parse_args(argv)

    import torch

    from biokernels.distributed import init_from_env
    from biokernels.studies.drug_screen.protocol import SourceModel, load_screen

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    comm, dev = init_from_env(a.device)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s rank {comm.rank}/{comm.world_size} %(levelname)s %(message)s")
    log = logging.getLogger(MODULE)
    cfg = json.loads(Path(a.config).read_text())
    data, _ = load_screen(a.expression, a.controls, a.fingerprints, a.folds)
    role = data.folds["role"].to_numpy()
    src, tgt = np.flatnonzero(role == "source"), np.flatnonzero(role == "target")
    log.info("joined %s on %s: %d source pairs, %d target pairs", comm, dev, len(src), len(tgt))
    model = SourceModel(a.lam, kernel_params=cfg["kernel"], device=dev, solver=cfg["solver"],
                        settings=cfg.get("solver_settings"), comm=comm, log=log, seed=a.seed).fit(data, src)
    pred = model.predict(data, tgt)
    if comm.rank == 0:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        _atomic_save(out / "predictions.npy", lambda p: np.save(open(p, "wb"), pred))
        info = {k: v for k, v in model.info_.items() if isinstance(v, (int, float, str, bool, list, type(None)))}
        info["solver"] = model.solver_
        _atomic_save(out / "info.json", lambda p: p.write_text(json.dumps(info, indent=2, default=float)))
    comm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
