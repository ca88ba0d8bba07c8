# What every study's rules share: config validation, the seed, the device,
# the GPU partition, the conda envs, wildcard constraints, report categories
# and the figure() / canonical() / mem_per_attempt() helpers. Each study's own
# settings, paths, input functions and targets are in rules/<study>_helpers.smk
# (or at the top of rules/<study>.smk where it defines no function).
import os
import sys

from snakemake.utils import validate

sys.path.insert(0, os.path.join(workflow.basedir, "..", "src"))
from biokernels.config import check_config, find_missing_paths, schema_errors

# Every schema violation, one line each (Snakemake's validate, which also fills
# the schema's defaults, stops at the first); then what the schema cannot
# express (biokernels.config.check_config) and the input files.
_schema_problems = schema_errors(
    config, os.path.join(workflow.basedir, "schemas/config.schema.yaml")
)
if _schema_problems:
    raise WorkflowError("Config validation failed:\n" + "\n".join(_schema_problems))
validate(config, schema="../schemas/config.schema.yaml")
_config_problems = check_config(config) + find_missing_paths(config)
if _config_problems:
    raise WorkflowError("Config validation failed:\n" + "\n".join(_config_problems))

SEED = config["seed"]
DEVICE = config["device"]
GPU_PARTITION = config["slurm"]["gpu_partition"]

# Conda envs, one per rule family (paths relative to rules/).
ENV_CORE = "../envs/core.yaml"
ENV_TORCH = "../envs/torch.yaml"
ENV_CHEM = "../envs/chem.yaml"


# Wildcards that several rules share, constrained once (a rule's own
# constraint overrides; theory.smk adds tid, from its THEORY_IDS).
wildcard_constraints:
    sweep="lam|bandwidth",
    featurization="morgan|mol2vec",
    key="[a-z_]+[0-9]*",
    collection="[A-Za-z0-9_]+",
    cohort="[A-Za-z0-9_]+",


# Report categories, one per paper (report/workflow.rst; rules/report.smk
# adds "0. Paper vs reproduction").
PAPER_TRANSFER = "1. Transfer learning with kernel methods (Radhakrishnan et al. 2023)"
PAPER_DIFFUSION = "2. Adaptive diffusion kernel learning (Sun, Ji & Ye 2008)"
PAPER_PIMKL = "3. PIMKL: pathway-induced MKL (Manica et al. 2019)"
PAPER_MMDT = "4. LS-MMDT: scalable domain adaptation (Rodner et al. 2013)"
# Caption of the table (TSV) behind each figure in the report.
TABLE_CAPTION = "../report/figure_table.rst"


def figure(study, fig_id):
    """The PDF and PNG of a figure target (DESIGN.md naming)."""
    return [
        f"results/{study}/figures/{fig_id}.pdf",
        f"results/{study}/figures/{fig_id}.png",
    ]


def canonical(value):
    """Dicts with keys sorted, recursively: rule params that do not depend on
    the key order of a config file (Snakemake reruns a job when the text of
    its params changes)."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


# Resources: a rule sets only those it needs beyond the profiles'
# default-resources (profiles/local and profiles/slurm: mem_mb 4000 * attempt,
# runtime 120 min): GPUs, more memory, longer runs. Not in a
# workflow/profiles/default: Snakemake merges that one into every run, and its
# default-resources would replace those of --profile slurm (the partition and
# account).
def mem_per_attempt(base):
    """The mem_mb resource of a rule needing more memory than the default,
    `base` MB on the first attempt, `base` times the attempt number on the
    retries after a failure (the SLURM profile's `retries`), so a job killed
    for memory can succeed."""
    return lambda wildcards, attempt: base * attempt
