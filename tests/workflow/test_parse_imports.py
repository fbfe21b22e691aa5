"""What the workflow imports while it parses, which every Snakemake start pays for (each dry run, each
`make` command, each cluster job and its step): the project's modules that its files import, and
none of them may pull in torch, numba, scipy or the plotting stack (torch alone costs about 2 CPU-s a
start, scipy.special 0.18, numba 0.2)."""

import os
import re
import subprocess
import sys

import pytest

from helpers import ROOT

HEAVY = ("torch", "seaborn", "matplotlib", "numba", "scipy")
IMPORT = re.compile(r"^from (replication[\w.]*) import|^import (replication[\w.]*)", re.MULTILINE)
# They read the workflow's files and import in child processes, where no mutant reaches; mutmut's copy
# of the checkout lacks the rule files under src/.
pytestmark = pytest.mark.skipif(
    bool(os.environ.get("MUTANT_UNDER_TEST")), reason="reads files and runs child processes, which mutants never reach"
)


def workflow_files() -> list:
    return [ROOT / "workflow" / "Snakefile", *ROOT.glob("workflow/rules/*.smk"), *ROOT.glob("src/replication/**/*.smk")]


def parse_time_modules() -> list[str]:
    """Every project module that a file of the workflow imports (as the Snakefile and rules write it)."""
    found = {first or second for path in workflow_files() for first, second in IMPORT.findall(path.read_text())}
    return sorted(found)


def test_the_workflow_imports_project_modules_as_parsing_does():
    modules = parse_time_modules()
    # The rule files of both papers are read, and the module of the ablation's variants among them.
    assert "replication.papers.local_to_global.transformer.ablation_variants" in modules
    assert "replication.papers.benign_overfitting.settings" in modules and len(modules) > 15


def heavy_imports(modules: list[str]) -> list[str]:
    """Which of HEAVY a fresh interpreter holds after importing ``modules``."""
    code = "import sys\n" + "".join(f"import {module}\n" for module in modules)
    code += f"print(' '.join(name for name in {HEAVY!r} if name in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    return result.stdout.split()


def test_parsing_the_workflow_imports_neither_torch_nor_the_plotting_stack():
    assert heavy_imports(parse_time_modules()) == []


def test_the_check_sees_a_heavy_import():
    """The same check over a module that imports torch (the ablation's two-symbol model) names it."""
    assert "torch" in heavy_imports(["replication.papers.local_to_global.transformer.ablation_model"])


# The transformer's tables count the parameters of the model itself: that job builds it.
BUILDS_THE_MODEL = {"l2g_tables.py"}


def analysis_job_modules() -> dict[str, list[str]]:
    """The project modules each job of the transformer, the phase diagram and the plateau imports, for
    the jobs that train nothing (their scripts never start a training job): figures, claims, measures."""
    scripts = ROOT.glob("src/replication/papers/local_to_global/*/scripts/*.py")
    chosen = [path for path in scripts if path.parent.parent.name in ("transformer", "phase", "plateau")]
    return {
        path.name: sorted({first or second for first, second in IMPORT.findall(path.read_text())})
        for path in chosen
        if "training_job" not in path.read_text() and path.name not in BUILDS_THE_MODEL
    }


def test_the_jobs_that_train_nothing_import_no_torch():
    """Each such job starts without torch's ~1.4 CPU-s import: it reads what training wrote."""
    jobs = analysis_job_modules()
    assert {"l2g_plateau_law.py", "l2g_phase_heatmaps.py", "l2g_ablation.py", "l2g_fig4.py"} <= set(jobs)
    assert "l2g_transformer.py" not in jobs and len(jobs) > 15
    assert "torch" not in heavy_imports(sorted({module for modules in jobs.values() for module in modules}))
