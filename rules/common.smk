# Config validation, shared helpers and wildcard constraints.
import os
import sys

from snakemake.utils import validate

sys.path.insert(0, os.path.join(workflow.basedir, "src"))
from biokernels.config import find_missing_paths  # noqa: E402

validate(config, schema="../config/schemas/config.schema.yaml")

_missing = find_missing_paths(config)
if _missing:
    raise WorkflowError("Config validation failed:\n" + "\n".join(_missing))

SEED = config["seed"]
DEVICE = config["device"]
GPU_PARTITION = config["slurm"]["gpu_partition"]

# Conda envs, one per rule family (paths relative to rules/).
ENV_CORE = "../envs/core.yaml"
ENV_TORCH = "../envs/torch.yaml"


wildcard_constraints:
    sweep="lam|bandwidth",


def figure(study, fig_id):
    """The PDF and PNG of a figure target (DESIGN.md naming)."""
    return [f"results/{study}/figures/{fig_id}.pdf", f"results/{study}/figures/{fig_id}.png"]
