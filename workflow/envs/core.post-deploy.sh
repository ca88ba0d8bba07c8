#!/usr/bin/env bash
# Installs biokernels into this conda env, so the rules' scripts import it
# like any package (they do not edit sys.path). Snakemake runs
# <env>.post-deploy.sh once, right after creating the env of <env>.yaml, with
# the env activated (snakemake/deployment/conda.py: Env.create ->
# execute_deployment_script, `source activate <env>; <shebang> <script>`).
# chem/core/torch.post-deploy.sh are identical (tests/workflow/test_envs.py).
#
# Which source tree: Snakemake first copies this script to
# .snakemake/conda/<hash>.post-deploy.sh, so "$0" does not lead back to the
# repository; but it runs it in Snakemake's working directory, which for this
# workflow is the repository root (config/config.yaml is read relative to
# it). The env is tied to that directory too: its hash includes the path of
# <workdir>/.snakemake/conda, so moving the checkout makes Snakemake build a
# fresh env, and the editable link below cannot outlive its tree.
# BIOKERNELS_SRC=/path/to/repository overrides $PWD: for `snakemake
# --directory ELSEWHERE`, or a --conda-prefix shared between checkouts (the
# env is then shared too, and imports the checkout that created it).
#
# -e (editable): the env imports the tree's src/, as make setup's .venv does.
# A copy would go stale: Snakemake rebuilds the env only when the yaml or
# this script changes, not when src/ does.
# --no-deps: the yaml pins what this env needs; pyproject.toml's full list
# (torch, rdkit, ...) must not be pulled into every env.
set -euo pipefail
src="${BIOKERNELS_SRC:-$PWD}"
if [ ! -f "$src/pyproject.toml" ] || [ ! -f "$src/src/biokernels/__init__.py" ]; then
    echo "post-deploy: '$src' is not the biokernels repository (no pyproject.toml and" \
        "src/biokernels/); run snakemake from the repository root or set BIOKERNELS_SRC" >&2
    exit 1
fi
python -m pip install --quiet --no-input --no-deps --editable "$src"
# Fail here, at env creation, rather than in the first job.
python -c "import biokernels"
