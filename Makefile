# Two commands on a fresh machine: `make figures` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CORES  ?= all
CONFIG ?= config/config.yaml

.PHONY: env figures test lint report clean diff bless bless-config bless-smoke

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
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG) --report report.html figures/all

# Every figure against figures/reference/<set> (CONFIG=config/smoke.yaml compares the smoke set).
# Exits non-zero when one exceeds tolerance; figures/diff/report.html stays to be read.
diff: env
	$(BIN)/snakemake --cores $(CORES) --configfile $(CONFIG) figures/diff/passed

# The committed references change only here, on purpose: both sets from fresh pipeline runs.
bless: bless-config bless-smoke

bless-config: env
	$(BIN)/snakemake --cores $(CORES) --configfile config/config.yaml figures/all
	$(BIN)/python -m replication.diff bless . figures/reference/config

# In a scratch directory, so the paper-setting figures in figures/ stay as they are.
bless-smoke: env
	tmp=$$(mktemp -d) && \
	$(BIN)/snakemake --cores $(CORES) --snakefile workflow/Snakefile --directory $$tmp \
		--configfile $(CURDIR)/config/smoke.yaml figures/all && \
	$(BIN)/python -m replication.diff bless $$tmp figures/reference/smoke && rm -rf $$tmp

clean:
	rm -rf results figures/local_to_global figures/benign_overfitting figures/all figures/claims.md figures/diff .snakemake/log
