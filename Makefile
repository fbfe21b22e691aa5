# Two commands on a fresh machine: `make figures` and `make test`.
# Targets come first: --configfile takes every word after it as a config file.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CORES  ?= all
CONFIG ?= config/config.yaml
# Every installed version, transitive ones too (`make lock` writes it from pyproject.toml).
LOCK   := requirements/lock.txt
# The lock's lines for pip itself: its pin and the hashes on the lines that continue it.
LOCKED_PIP = awk '/^pip==/ { found = 1 } found { print } found && !/\\$$/ { exit }' $(LOCK)
# Where the pipeline runs (outputs land there): the paper tree here, another CONFIG's tree in
# variants/<its name> (config/smoke.yaml: variants/smoke); a scratch folder keeps figures/ as it is.
WORKDIR ?= $(if $(filter config/config.yaml,$(CONFIG)),.,variants/$(basename $(notdir $(CONFIG))))
# A variant (docs/explore.md): its settings over CONFIG, in variants/<VARIANT>; SET='key=value ...'
# adds settings on the command line (a SET without VARIANT names the variant after them).
# SET reaches the recipe through the environment ($$SET), so quotes and list values such as
# 'a.b=[1, 2, 3]' arrive intact; replication.variants splits it on spaces outside [] {} and quotes.
VARIANT ?=
SET ?=
export SET
# Python keeps the project's compiled modules (its own __pycache__, ignored by git) even where the
# environment says not to, as some container images do: every job, Snakemake run and test worker
# imports the project, and each would compile it again (a smoke build 5 CPU-s more; pytest rewrites
# every test module again in each worker).
unexport PYTHONDONTWRITEBYTECODE
VARIANT_RUN = $(BIN)/python -m replication.variants $(if $(VARIANT),--name $(VARIANT)) \
	--configfile $(abspath $(CONFIG)) --sets "$$SET" --make-goal $(GOAL) --
# Members of the numerical-noise ensemble that `make bless` runs, and what they build: perturbation
# members (integers) and kernel families, the vector kernels another CPU would run (replication.kernels;
# why these: docs/diff.md).
ENSEMBLE ?= 1 2 3 4 aten-avx2 aten-default mkl-compatible avx2-machine
ENSEMBLE_TARGETS ?= figures/all
# What the kernel families of the ensemble build (default: the same).
FAMILY_TARGETS ?= $(ENSEMBLE_TARGETS)
# Snakemake under the run lock: a killed run resumes with the same command, and Ctrl-C ends with one
# line naming it (replication.pipeline_run; --make-goal: the command is `make <this goal> ...`).
PIPELINE = $(BIN)/python -m replication.pipeline_run --directory $(WORKDIR) --make-goal $(GOAL) --
# The goal as typed: `build` with its MANIFEST (quoted: one word); any other goal as it is, unquoted, so
# that make runs a plain build without a shell and a Ctrl-C reaches the pipeline first.
GOAL = $(if $(filter build,$@),"build MANIFEST=$(MANIFEST)",$@)

.PHONY: env lock figures build cost test lint format docs report rulegraph clean clean-paper diff bless bless-config bless-smoke bless-manifest timings mutation compare sweep $(MANIFEST_TARGETS)

env: $(VENV)/.installed

# Every version, transitive ones included, from the lock (hashes checked; pip resolves nothing),
# then this checkout, editable; scripts/check_environment.py fails on any version not the lock's.
# Hashes work with the CPU build of torch: the lock pins torch==2.13.0+cpu with the hash of that
# wheel (on these machines in /opt/wheels, which pip's config searches; elsewhere add PyTorch's
# CPU wheel index with --extra-index-url).
# The lock's pip goes in first: the pip a new venv comes with spends some 30 s more choosing
# among the index's files. Installs are not byte-compiled file by file; compileall does it on every
# core (files that are not this Python's syntax, such as torch's Python 3.12 example, are skipped,
# as pip skips them). docs/performance.md: make env 63 -> 43 s.
$(VENV)/.installed: $(LOCK) pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(LOCKED_PIP) | $(BIN)/pip install --quiet --require-hashes --no-deps -r /dev/stdin
	$(BIN)/pip install --quiet --require-hashes --no-deps --no-compile -r $(LOCK)
	$(BIN)/python -m compileall -qq -j 0 $(VENV)/lib || true
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/python scripts/check_environment.py $(LOCK)
	touch $@

# The lock file again from pyproject.toml's pins and the dev extra (after changing a dependency
# there): every transitive version with its hashes. Minutes: pip-compile asks the package index.
lock: env
	$(BIN)/pip-compile --quiet --extra dev --generate-hashes --allow-unsafe --strip-extras \
		--no-emit-index-url --no-emit-find-links --output-file $(LOCK) pyproject.toml

# $(call BUILD,target): the target in CONFIG's tree, or in the variant's when VARIANT or SET is given.
BUILD = $(if $(strip $(VARIANT)$(SET)),$(VARIANT_RUN) $(1) --cores $(CORES),$(PIPELINE) $(1) --cores $(CORES) --configfile $(abspath $(CONFIG)))

figures: env
	$(call BUILD,figures/all)

# The dry run of a build: the jobs `make figures` (TARGET=figures/phase or figures/plateau for
# those) would run in CONFIG's tree, or in variants/$(VARIANT) once laid out, and about how many
# CPU-minutes they take, from the per-rule costs scripts/benchmarks/build_times.py measured
# (docs/measurements/build_times.md). Runs nothing.
TARGET ?= figures/all
cost: env
	$(BIN)/python -m replication.cost --directory $(if $(VARIANT),variants/$(VARIANT),$(WORKDIR)) \
		--configfile $(abspath $(CONFIG)) $(if $(VARIANT),--configfile $(abspath variants/$(VARIANT)/variant.yaml)) \
		-- $(TARGET) --cores $(CORES)

# B against A (paper, reference, reference/<set>, a variant's name or a folder): settings that differ,
# claims whose verdict changed, figures that moved beyond numerical noise; compare/<A>-vs-<B>/report.html.
# Exits 0 whenever it could compare: a science difference is the report's content.
A ?= paper
compare: env
	$(BIN)/python -m replication.diff.tree_comparison $(A) $(B)

# Every point of config/sweeps/$(SWEEP).yaml in one Snakemake run, then sweeps/$(SWEEP)/summary.*.
sweep: env
	$(BIN)/python -m replication.sweeps $(SWEEP) --make-goal $@ -- --cores $(CORES)

# Any manifest, figures/$(MANIFEST), with its claims in figures/$(MANIFEST)_claims.md: all (the laptop set,
# as `make figures`) or a part's own, a workload of its own that figures/all leaves out (the papers'
# parts declare them: e.g. the phase diagram, docs/phase-diagram.md, and the plateau's landscape,
# docs/plateau.md, which reads the phase grid). In CONFIG's tree, or a variant's (VARIANT, SET).
MANIFEST ?= all
build: env
	$(call BUILD,figures/$(MANIFEST))

# Each manifest with a reference set of its own is a target too, `make <name>` = `make build MANIFEST=<name>`
# (the committed sets' folders name them; config and smoke are figures/all's two).
MANIFEST_TARGETS := $(filter-out config smoke,$(notdir $(wildcard figures/reference/*)))
$(MANIFEST_TARGETS):
	@$(MAKE) --no-print-directory build MANIFEST=$@

# A manifest's reference set (figures/reference/$(MANIFEST): its figures' PNG and CSV, claims report,
# provenance, settings) from its finished run in RUN_DIR, then that run's cost where a part of the
# manifest declares how it is measured (replication.run_cost: its benchmark on RUN_DIR, e.g. from the
# kernel's counts and RUN_DIR's /usr/bin/time -v reports, writing its report in docs/measurements/).
RUN_DIR ?= .
bless-manifest: env
	$(BIN)/python -m replication.diff.bless --manifest $(MANIFEST) $(RUN_DIR) figures/reference/$(MANIFEST)
	$(BIN)/python -m replication.run_cost $(MANIFEST) $(RUN_DIR)

# The suite in parallel (pytest-xdist): most tests wait on Snakemake subprocesses, so two workers
# keep 2 cores busy; the smoke trees are built once and shared, under file locks (tests/conftest.py).
# Tests are handed out one at a time, in the order tests/conftest.py sets (the pipeline tests first):
# xdist's default sends runs of consecutive tests, which piled the pipeline tests onto one worker.
TEST_WORKERS ?= 2
test: env
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --maxschedchunk 1

# Mutation testing of src/replication/ against the fast tests (tens of minutes on 2 cores);
# writes results/mutation/report.md. MUTATION_JOBS=N runs N mutants side by side (default: the cores);
# MUTATION_ONLY='replication.io.* replication.config.*' runs those modules' mutants only.
mutation: env
	$(BIN)/python scripts/mutation.py $(if $(MUTATION_JOBS),--jobs $(MUTATION_JOBS)) $(if $(MUTATION_ONLY),--only $(MUTATION_ONLY))

# Python (ruff: lint and format) and the workflow (snakefmt, snakemake --lint); `make format` fixes the format.
lint: env
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check workflow src/replication/papers tests/plugin_paper
	$(BIN)/snakemake --lint

# The documentation (mkdocs.yml, docs/) into site/; --strict fails on any warning: a broken link or
# anchor, a page outside the nav, or a missing included file (the claims of the reference sets).
docs: env
	$(BIN)/mkdocs build --strict

format: env
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .
	$(BIN)/snakefmt workflow src/replication/papers tests/plugin_paper

# The report of a tree (VARIANT=<name> for a variant's): report.html in that tree.
REPORT_TREE = $(if $(VARIANT),variants/$(VARIANT),$(WORKDIR))
report: env
	$(BIN)/snakemake figures/all --snakefile workflow/Snakefile --directory $(REPORT_TREE) --cores $(CORES) \
		--report $(abspath $(REPORT_TREE))/report.html \
		--configfile $(abspath $(CONFIG)) $(if $(VARIANT),$(abspath variants/$(VARIANT)/variant.yaml))

# The rules and how they feed each other, as a Mermaid flowchart in Markdown (GitHub and most
# Markdown viewers draw it; no Graphviz needed): rulegraph.md.
rulegraph: env
	{ echo '```mermaid'; $(BIN)/snakemake figures/all --forceall --rulegraph mermaid-js; echo '```'; } > rulegraph.md.tmp
	mv rulegraph.md.tmp rulegraph.md

# Every figure against figures/reference/<set> (CONFIG=config/smoke.yaml compares the smoke set).
# Exits non-zero when one exceeds tolerance; figures/diff/report.html stays to be read. Its last line
# is the verdict (figures/diff/verdict.txt), or says that the run stopped before the comparison.
diff: env
	@start=$$(date +%s); status=0; \
	$(PIPELINE) figures/diff/passed --cores $(CORES) --configfile $(abspath $(CONFIG)) || status=$$?; \
	$(BIN)/python -m replication.diff.verdict $(WORKDIR)/figures/diff --since $$start --status $$status

# The committed references change only here, on purpose: both sets from fresh pipeline runs, each
# with the envelope of an ensemble of perturbed reruns (members in scratch folders; cost printed).
BLESS = $(BIN)/python -m replication.diff.bless --members $(ENSEMBLE) --targets $(ENSEMBLE_TARGETS) \
	--family-targets $(FAMILY_TARGETS) --cores $(CORES)

bless: bless-config bless-smoke

bless-config: env
	$(MAKE) figures CONFIG=config/config.yaml
	$(BLESS) --configfile config/config.yaml -- . figures/reference/config

# In a scratch directory, so the paper-setting figures in figures/ stay as they are.
bless-smoke: env
	tmp=$$(mktemp -d) && \
	$(MAKE) figures CONFIG=config/smoke.yaml WORKDIR=$$tmp && \
	$(BLESS) --configfile config/smoke.yaml -- $$tmp figures/reference/smoke && rm -rf $$tmp

# CPU-s, wall and peak memory per rule of the last pipeline run: the kernel's counts at the end of each job's log
# (replication.job_cost), Snakemake's benchmark files for rules without them.
timings: env
	$(BIN)/python scripts/benchmarks/timings.py --directory .

# Everything generated, every tree included; figures/reference (the committed references) stays.
clean:
	@echo "make clean: deleting the paper tree's outputs and variants/ (every variant and the smoke tree), sweeps/, compare/"
	rm -rf benchmarks mutants results site .snakemake/log variants sweeps compare rulegraph.md
	find figures -mindepth 1 -maxdepth 1 ! -name reference -exec rm -rf {} +

# The paper tree's outputs only (the project root's results/, figures/, logs/, benchmarks/ and
# Snakemake's records of them); variants/ and figures/reference stay.
clean-paper:
	rm -rf benchmarks results logs .snakemake/metadata .snakemake/incomplete
	find figures -mindepth 1 -maxdepth 1 ! -name reference -exec rm -rf {} +
