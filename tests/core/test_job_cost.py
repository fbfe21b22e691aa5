"""A job's cost line: the kernel's count written by the job, checked against the parent's own count
of the same process; read back per job from a tree's logs."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap
import time
from types import ModuleType, SimpleNamespace

import pytest

from replication import job_cost

# A job script as Snakemake runs it: the ``snakemake`` object in the script's namespace names the rule.
JOB = """
import gc, sys, time
from types import SimpleNamespace
{namespace}
from replication.io import log_to
log_to(sys.argv[1]).info("started, %d objects kept from the collector", gc.get_freeze_count())
end = time.process_time() + float(sys.argv[2])
while time.process_time() < end:
    pass
"""


def run_job(tmp_path, seconds: float, in_snakemake: bool) -> tuple[str, float, float]:
    """Run the job script; its log's text, and its CPU and wall seconds as the parent counts them."""
    script = tmp_path / "job.py"
    namespace = 'snakemake = SimpleNamespace(rule="busy_rule")' if in_snakemake else ""
    script.write_text(textwrap.dedent(JOB.format(namespace=namespace)))
    log = tmp_path / "logs" / "busy" / "job.log"
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.time()
    subprocess.run([sys.executable, str(script), str(log), str(seconds)], check=True)
    wall, after = time.time() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return log.read_text(), cpu, wall


def test_a_jobs_log_ends_with_the_kernels_count_of_its_cost(tmp_path):
    text, parent_cpu, parent_wall = run_job(tmp_path, 0.6, in_snakemake=True)
    cost = job_cost.parse(text.splitlines()[-1])
    assert cost is not None and cost["rule"] == "busy_rule"
    # The job counts itself just before it exits; the parent counts the whole process after it.
    assert 0.6 <= cost["cpu_s"] <= parent_cpu <= cost["cpu_s"] + 0.5
    assert cost["cpu_s"] == pytest.approx(cost["user_s"] + cost["system_s"], abs=0.02)
    # CPU may exceed wall (the imports' threads): the wall is bounded by the parent's count only.
    assert 0.1 < cost["wall_s"] <= parent_wall + 0.05
    assert 10 < cost["max_rss_mb"] < 4000
    # What the job imported is kept from the garbage collector (job_cost.record_at_exit).
    kept = int(text.split("started, ")[1].split()[0])
    assert kept > 1000


def test_outside_a_snakemake_job_the_log_has_no_cost_line(tmp_path):
    text, _, _ = run_job(tmp_path, 0.05, in_snakemake=False)
    assert "started, 0 objects kept from the collector" in text and job_cost.PREFIX not in text


def test_job_costs_reads_finished_jobs_only(tmp_path):
    logs = tmp_path / "logs"
    (logs / "a").mkdir(parents=True)
    line = f"{job_cost.PREFIX} rule=train cpu_s=12.50 user_s=12.00 system_s=0.50 wall_s=13.00 max_rss_mb=200.00"
    (logs / "a" / "seed1.log").write_text(f"progress\n{line}\n")
    (logs / "a" / "seed2.log").write_text(f"{line}\nTraceback: the job failed after a resumed start\n")
    (logs / "killed.log").write_text("progress 40%\n")
    (logs / "empty.log").write_text("")
    table = job_cost.job_costs(logs)
    assert table.to_dict("records") == [
        {"rule": "train", "log": "a/seed1.log", "cpu_s": 12.5, "user_s": 12.0, "system_s": 0.5,
         "wall_s": 13.0, "max_rss_mb": 200.0}
    ]  # fmt: skip
    none = job_cost.job_costs(tmp_path / "none")
    assert none.empty and list(none.columns) == ["rule", "log", *job_cost.FIELDS]


def test_job_costs_reads_logs_with_bytes_that_are_no_text(tmp_path):
    """A job may print raw bytes (a library's binary output); its cost line is still read."""
    line = f"{job_cost.PREFIX} rule=train cpu_s=1.00 user_s=1.00 system_s=0.00 wall_s=2.00 max_rss_mb=10.00"
    (tmp_path / "binary.log").write_bytes(b"\xff\xfe progress \x80\n" + line.encode() + b"\n")
    table = job_cost.job_costs(tmp_path)
    assert table[["rule", "log", "cpu_s", "wall_s"]].values.tolist() == [["train", "binary.log", 1.0, 2.0]]


@pytest.mark.parametrize(
    "line",
    [
        "job cost (kernel): rule=train cpu_s=1.00",  # fields missing
        "job cost (kernel): rule=train cpu_s=x user_s=1 system_s=1 wall_s=1 max_rss_mb=1",
        "  job cost (kernel): rule=train cpu_s=1 user_s=1 system_s=1 wall_s=1 max_rss_mb=1",
    ],
)
def test_other_lines_are_no_cost_lines(line):
    assert job_cost.parse(line) is None


# The job scripts above run in a child process; these check the same two steps in this process,
# where mutation testing sees them.
@pytest.mark.parametrize(
    ("namespace", "rule"),
    [
        ({"snakemake": SimpleNamespace(rule="busy_rule")}, "busy_rule"),
        ({"snakemake": SimpleNamespace(rule="")}, None),
        ({"snakemake": SimpleNamespace(rule=3)}, None),
        ({"snakemake": SimpleNamespace()}, None),
        ({}, None),
    ],
)
def test_the_rule_is_read_from_the_snakemake_object_of_the_main_module(monkeypatch, namespace, rule):
    main = ModuleType("__main__")
    main.__dict__.update(namespace)
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert job_cost.snakemake_rule() == rule


@pytest.mark.parametrize("in_snakemake", [True, False])
def test_the_cost_line_is_registered_once_and_only_in_a_job(monkeypatch, in_snakemake):
    main = ModuleType("__main__")
    if in_snakemake:
        main.snakemake = SimpleNamespace(rule="busy_rule")
    monkeypatch.setitem(sys.modules, "__main__", main)
    monkeypatch.setattr(job_cost, "_registered", False)
    registered, frozen = [], []
    monkeypatch.setattr(job_cost.atexit, "register", lambda *call: registered.append(call))
    monkeypatch.setattr(job_cost.gc, "freeze", lambda: frozen.append(True))
    job_cost.record_at_exit()
    job_cost.record_at_exit()
    assert registered == ([(job_cost._write_cost_line, "busy_rule")] if in_snakemake else [])
    assert len(frozen) == in_snakemake  # once, as the job starts its work
    assert job_cost._registered is in_snakemake
