# The two commands of the README quickstart:
#   make run    set up .venv (if missing or stale) and run the workflow's
#               default target on the embedded default data
#   make test   the same set-up, then the whole test suite
# Needs Python >= 3.11 (PYTHON=python3.12 make ... to choose another).

PYTHON ?= python3
VENV   ?= .venv
CORES  ?= 2
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.biokernels-installed

.PHONY: run test setup profiles clean-results

run: setup
	$(BIN)/snakemake --profile profiles/local --cores $(CORES)

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

setup: $(STAMP) profiles

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "biokernels needs Python >= 3.11, found " + sys.version.split()[0])'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[workflow,test]"
	touch $(STAMP)

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
