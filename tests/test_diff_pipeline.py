"""`make diff` on the smoke pipeline: regenerated figures match figures/reference/smoke."""
import shutil

import pandas as pd

from conftest import ROOT, run_snakemake

SMOKE = ["--configfile", str(ROOT / "config" / "smoke.yaml"), "--cores", "2"]
REFERENCES = ROOT / "figures" / "reference" / "smoke"


def test_regenerated_smoke_figures_match_references(smoke_run):
    result = run_snakemake(smoke_run, *SMOKE, "figures/diff/passed", check=False)
    summary = pd.read_csv(smoke_run / "figures/diff/summary.csv")
    failing = summary.loc[~summary.passed, ["key", "status", "message"]]
    assert result.returncode == 0 and failing.empty, (
        "figures differ from figures/reference/smoke (after an intended change, run `make bless-smoke`):\n"
        + failing.to_string()
    )
    manifest = pd.read_csv(smoke_run / "figures/all", sep="\t")
    figures = {path.removeprefix("figures/").removesuffix(".pdf") for path in manifest.path if path.endswith(".pdf")}
    assert set(summary.key) == figures


def test_failure_exits_non_zero_and_the_report_stays(smoke_run, tmp_path):
    """A reference whose data is 5% off in one column, and one figure missing from the pipeline."""
    references = tmp_path / "references"
    shutil.copytree(REFERENCES, references / "smoke")
    first = sorted((references / "smoke").rglob("*.csv"))[0]
    data = pd.read_csv(first)
    column = next(c for c in data.columns if pd.api.types.is_float_dtype(data[c]) and (data[c].abs() > 1e-3).any())
    data[column] *= 1.05
    data.to_csv(first, index=False)
    shutil.copy(first.with_suffix(".png"), references / "smoke" / "retired.png")
    result = run_snakemake(smoke_run, *SMOKE, "figures/diff/passed", "--config", f"diff={{reference_dir: {references}}}",
                           check=False)
    assert result.returncode != 0
    assert "figures differ from the references" in result.stdout + result.stderr
    out = smoke_run / "figures/diff"
    assert (out / "report.html").exists() and not (out / "passed").exists()
    summary = pd.read_csv(out / "summary.csv").set_index("key")
    key = first.relative_to(references / "smoke").with_suffix("").as_posix()
    assert summary.loc[key, "status"] == "fail" and summary.loc[key, "data_worst_column"] == column
    assert summary.loc["retired", "status"] == "missing figure"
    assert f"<h2 id='{key}'>{key}: fail</h2>" in (out / "report.html").read_text()
    assert (out / "images" / f"{key}-diff.png").exists()
