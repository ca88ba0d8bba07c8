# The two commands of the README quickstart:
#   make run    set up .venv (if missing or stale) and run the workflow's
#               default target on the embedded default data
#   make test   the same set-up, then the whole test suite
# Needs Python 3.11 (PYTHON=/path/to/python3.11 make ... to choose one): the
# environment is installed from a lock resolved for CPython 3.11.
#
# make setup installs exactly the lock, hashes checked, then the package itself
# (editable). LOCK=requirements/lock-cuda.txt for GPU nodes (torch with CUDA).
# make lock regenerates both locks after a change to pyproject.toml's pins.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || echo python3)
VENV   ?= .venv
CORES  ?= 2
# pytest-xdist workers of `make test` (a test extra): one per core by default;
# TEST_WORKERS=0 runs the suite in one process. PYTEST_ARGS: more pytest options.
TEST_WORKERS ?= auto
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.biokernels-installed
LOCK   ?= requirements/lock-cpu.txt
# Where pip finds torch==2.13.0+cpu when its configured indexes lack it (PyPI
# has no +cpu wheels): PyTorch's CPU wheel page. make setup tries pip's own
# configuration first (a find-links folder or index that already has the
# wheel), so a machine without access to that page never waits on it.
TORCH_WHEELS ?= https://download.pytorch.org/whl/cpu/torch/
PIP_LOCKED   := $(BIN)/python -m pip install --quiet --require-hashes --no-deps

.PHONY: run test setup lock profiles clean-results

run: setup
	$(BIN)/snakemake --profile profiles/local --cores $(CORES)

test: setup
	$(BIN)/python -m pytest -n $(TEST_WORKERS) $(PYTEST_ARGS)

setup: $(STAMP) profiles

# Rebuilt when the lock, pyproject.toml or the installer pins change. The lock
# is the complete environment: --no-deps keeps pip from adding anything it does
# not list, prune_venv.py removes what an older lock (or an unlocked install)
# left behind, and `pip check` proves the closure is consistent. torch goes
# first, alone: only it may need TORCH_WHEELS, and pip would fetch that page
# again for every package of the lock.
$(STAMP): $(LOCK) pyproject.toml requirements/pip.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else "biokernels installs from $(LOCK), resolved for Python 3.11; found " + sys.version.split()[0] + " ($(PYTHON)); choose one with PYTHON=/path/to/python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP_LOCKED) -r requirements/pip.txt
	awk '/^[^ #]/ { keep = /^torch==/ } keep' $(LOCK) > $(VENV)/torch-lock.txt
	$(PIP_LOCKED) -r $(VENV)/torch-lock.txt 2>/dev/null || \
		$(PIP_LOCKED) --find-links $(TORCH_WHEELS) -r $(VENV)/torch-lock.txt
	$(PIP_LOCKED) -r $(LOCK)
	$(BIN)/python requirements/prune_venv.py $(LOCK)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	$(BIN)/python -m pip check
	touch $(STAMP)

# Regenerate requirements/lock-cpu.txt and lock-cuda.txt (and pip.txt) from
# pyproject.toml with uv (a pinned copy in .venv-lock/), for CPython 3.11 on
# x86_64 Linux, whatever machine runs it. Resolves from PyPI plus, for the CPU
# lock, TORCH_WHEELS (a page or a folder that has torch-2.13.0+cpu wheels).
UV_VERSION  := 0.13.9
PIP_VERSION := 26.3
UV         := .venv-lock/bin/uv
UV_COMPILE := $(UV) pip compile --quiet --generate-hashes --python-version 3.11 \
	--python-platform x86_64-unknown-linux-gnu --custom-compile-command "make lock"
LOCK_FLAGS := pyproject.toml --extra workflow --extra test --override requirements/overrides.txt

$(UV):
	$(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet uv==$(UV_VERSION)

lock: $(UV)
	{ cat requirements/lock-cpu.header; $(UV_COMPILE) $(LOCK_FLAGS) \
		--constraint requirements/torch-cpu.txt --find-links $(TORCH_WHEELS); } > requirements/lock-cpu.txt.new
	{ cat requirements/lock-cuda.header; $(UV_COMPILE) $(LOCK_FLAGS); } > requirements/lock-cuda.txt.new
	echo "pip==$(PIP_VERSION)" | $(UV_COMPILE) - > requirements/pip.txt.new
	mv requirements/lock-cpu.txt.new requirements/lock-cpu.txt
	mv requirements/lock-cuda.txt.new requirements/lock-cuda.txt
	mv requirements/pip.txt.new requirements/pip.txt

# `snakemake --profile slurm` finds a profile named `slurm` in the working
# directory: render it from profiles/slurm, with conda deployment when this
# machine has conda (or mamba) and the project's .venv otherwise.
profiles:
	@mkdir -p slurm
	@cp profiles/slurm/config.yaml slurm/config.yaml
	@if command -v conda >/dev/null 2>&1 || command -v mamba >/dev/null 2>&1; then \
		printf '\n# added by make setup: conda found\nsoftware-deployment-method: conda\n' >> slurm/config.yaml; \
		echo "slurm profile: conda deployment (workflow/envs/*.yaml)"; \
	else \
		echo "slurm profile: no conda on this machine; jobs run in $(VENV)"; \
	fi

clean-results:
	rm -rf results .snakemake/metadata
