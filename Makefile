# Two commands on a fresh machine: `make figures` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CORES  ?= all
CONFIG ?= config/config.yaml

.PHONY: env figures test lint report clean

env: $(VENV)/.installed

# Rebuilt only when the pinned dependencies change.
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e .
	touch $@

figures: env
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG) figures/all

test: env
	$(BIN)/python -m pytest

lint: env
	$(BIN)/snakemake --lint

report: env
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG) --report report.html

clean:
	rm -rf results figures/local_to_global figures/benign_overfitting figures/all figures/claims.md .snakemake/log
