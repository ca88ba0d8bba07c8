#!/usr/bin/env bash
# The prepared GPU check (benchmarks/gpu_check.py): the CUDA NTK, CNTK and
# pair-NTK against the CPU, the LINCS-2020-size source fit (720,000 pairs) on
# one GPU, and optionally the GPU-tagged rules of the default; one JSON.
#   on a GPU machine:  benchmarks/gpu_check.sh --out $OUT/gpu_check.json [--workflow]
#   on the CPU:        benchmarks/gpu_check.sh --small --device cpu
# Python: $PYTHON, else the project's .venv, else python3 (with src/ on the path).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
exec "$PY" benchmarks/gpu_check.py "$@"
