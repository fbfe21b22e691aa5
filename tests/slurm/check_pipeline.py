"""The smoke pipeline through `--profile profiles/slurm` on the cluster tests/slurm/run.sh started.

4. a local run (`--profile profiles/local`) and a SLURM run of config/smoke.yaml, each in a
   temporary directory, both from one snapshot of the checkout (edits made meanwhile cannot make
   them differ). REPLICATION_SLURM_REFERENCE=<dir> names a finished local smoke run to compare
   with instead (the test suite passes its own, made once per session);
5. every job of the SLURM run went through sbatch (its job id in the executor's log, a SLURM log
   file, the job's final state in squeue) and every file under figures/ equals the local run's,
   byte for byte;
6. one job is cancelled with scancel while its step (the rule itself) runs, once another job has
   completed; the rerun completes the pipeline without touching the outputs finished before.
Exits non-zero with the reason when a check fails.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
# The test cluster has no accounting database: no account, job states from squeue. Status checks
# start after 1 s instead of 40 (jobs here last seconds); SLURM logs are kept to be inspected.
# Threads are capped at this node's CPUs, so a rule asking for more still gets scheduled.
CLUSTER_FLAGS = [
    "--slurm-no-account",
    "--slurm-status-command",
    "squeue",
    "--slurm-init-seconds-before-status-checks",
    "1",
    "--slurm-keep-successful-logs",
    "--latency-wait",
    "5",
    "--max-threads",
    str(os.cpu_count()),
]
RUN_TIMEOUT = 600
SUBMITTED = re.compile(r"Job (\d+) has been submitted with SLURM jobid (\d+) \(log: (.+)\)\.")
RULE_BLOCK = re.compile(r"^(local)?rule (\w+):\n((?:    .*\n)+)", re.MULTILINE)
# A failed job's own logs, which Snakemake (show-failed-logs) copies between '=' rulers: the
# job's inner Snakemake names its rule again there, as job 0.
EMBEDDED_LOG = re.compile(r"^Logfile .*:\n(={20,})\n.*?^\1$", re.MULTILINE | re.DOTALL)


def fail(message: str) -> None:
    sys.exit(f"FAILED: {message}")


def snapshot(destination: Path) -> dict[str, str]:
    """Copy the checkout's files (tracked and not ignored) and return the environment that runs them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        source = CHECKOUT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    # numba's compiled kernels, which it keeps beside their sources and keys by the source's mtime
    # and size (copy2 keeps both): without them every first job on the cluster compiles them again,
    # side by side (the phase cells took 14 CPU-s each instead of 2).
    for cache in (CHECKOUT / "src").rglob("__pycache__/*.nb[ic]"):
        copied = destination / cache.relative_to(CHECKOUT)
        if copied.parent.parent.is_dir():
            copied.parent.mkdir(exist_ok=True)
            shutil.copy2(cache, copied)
    # Ahead of the editable install: every job imports the snapshot's library.
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(destination / "src"), os.environ.get("PYTHONPATH")])),
    }


# The phase diagram's smoke cells (the cluster-sized workload) and one trained figure of each
# paper: one DAG, every training job and grid shard an sbatch job. SLURM_TEST_TARGETS (words)
# names others, e.g. "figures/all figures/phase" for the whole laptop set too.
TARGETS = tuple(
    os.environ.get(
        "SLURM_TEST_TARGETS",
        "figures/phase figures/local_to_global/fig4.pdf figures/benign_overfitting/fig4.pdf",
    ).split()
)


def snakemake_command(root: Path, workdir: Path, profile: str, *extra: str) -> list[str]:
    return [
        str(SNAKEMAKE),
        "--snakefile",
        str(root / "workflow" / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(root / "config" / "smoke.yaml"),
        "--profile",
        str(root / "profiles" / profile),
        *extra,
        *TARGETS,
    ]


def squeue(*options: str) -> list[str]:
    return subprocess.run(["squeue", "--noheader", *options], capture_output=True, text=True, check=True).stdout.split()


def states() -> dict[str, str]:
    """Job id -> state of every job the controller remembers (MinJobAge keeps finished ones)."""
    return dict(line.split("|") for line in squeue("--states=all", "--format=%i|%T"))


def computing() -> set[str]:
    """Jobs whose step runs: the rule's own process, started by the executor with srun."""
    return {step.split(".")[0] for step in squeue("--steps", "--format=%i") if not step.endswith(".batch")}


def jobs_in_log(text: str) -> tuple[list[dict], dict[str, str]]:
    """The jobs a Snakemake log executed ({rule, local, outputs}) and snakemake job id -> SLURM id."""
    jobs = []
    text = EMBEDDED_LOG.sub("", text)
    for match in RULE_BLOCK.finditer(text):
        fields = dict(re.findall(r"^    (\w+): (.*)$", match.group(3), re.MULTILINE))
        outputs = [path for path in fields.get("output", "").split(", ") if path]
        jobs.append(
            {"rule": match.group(2), "local": bool(match.group(1)), "jobid": fields.get("jobid"), "outputs": outputs}
        )
    return jobs, {jobid: slurm_id for jobid, slurm_id, _ in SUBMITTED.findall(text)}


def outputs(workdir: Path) -> dict[str, tuple[int, str]]:
    """Every file under results/ and figures/: relative path -> (mtime in ns, sha256)."""
    found = {}
    for top in ("results", "figures"):
        for path in sorted((workdir / top).rglob("*")):
            if path.is_file():
                found[str(path.relative_to(workdir))] = (
                    path.stat().st_mtime_ns,
                    hashlib.sha256(path.read_bytes()).hexdigest(),
                )
    return found


def check_submitted(label: str, text: str, workdir: Path, states: dict[str, str], expected: dict[str, str]) -> list:
    """Every cluster job of a run was an sbatch job that reached the expected state."""
    jobs, slurm_ids = jobs_in_log(text)
    remote = [job for job in jobs if not job["local"]]
    if not remote:
        fail(f"{label}: no job was sent to the cluster")
    for job in remote:
        slurm_id = slurm_ids.get(job["jobid"])
        if slurm_id is None:
            fail(f"{label}: job {job['jobid']} ({job['rule']}) has no SLURM job id in the log")
        state = states.get(slurm_id)
        want = expected.get(slurm_id, "COMPLETED")
        if state != want:
            fail(f"{label}: SLURM job {slurm_id} ({job['rule']}) is {state}, expected {want}")
        if not list((workdir / ".snakemake" / "slurm_logs").rglob(f"{slurm_id}.log")):
            fail(f"{label}: no SLURM log file for job {slurm_id}")
        job["slurm_id"] = slurm_id
    local = sorted({job["rule"] for job in jobs if job["local"]})
    print(
        f"{label}: {len(remote)} sbatch jobs "
        f"({', '.join(job['rule'] + '=' + job['slurm_id'] for job in remote)}); local rules: {local}"
    )
    return remote


def run_and_cancel(root: Path, env: dict, workdir: Path, log_path: Path) -> tuple[str, str]:
    """A SLURM run in which one running job is cancelled once another has completed."""
    before = set(states())
    with open(log_path, "w") as log:
        driver = subprocess.Popen(
            snakemake_command(root, workdir, "slurm", *CLUSTER_FLAGS),
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        cancelled = None
        deadline = time.monotonic() + RUN_TIMEOUT
        while driver.poll() is None and time.monotonic() < deadline:
            ours = {job: state for job, state in states().items() if job not in before}
            running = sorted((job for job in computing() if ours.get(job) == "RUNNING"), key=int)
            if running and "COMPLETED" in ours.values():
                cancelled = running[-1]
                subprocess.run(["scancel", cancelled], check=True)
                break
            time.sleep(0.5)
        returncode = driver.wait(timeout=max(deadline - time.monotonic(), 1))
    text = log_path.read_text()
    if cancelled is None:
        fail(
            "no job was running after another had completed; the smoke DAG needs two cluster jobs "
            f"in sequence (log: {log_path})"
        )
    if returncode == 0:
        fail(f"the run with job {cancelled} cancelled exited 0")
    if f"SLURM-job '{cancelled}' failed, SLURM status is: 'CANCELLED'" not in text:
        fail(f"the executor did not report job {cancelled} as cancelled (log: {log_path})")
    return text, cancelled


PROVENANCE_NAME = "provenance.json"  # figures/provenance.json and figures/<manifest>_provenance.json


def same_provenance(local: Path, cluster: Path) -> bool:
    """Equal but for the git fields: the cluster runs a copy of the checkout without its history."""
    local_record, cluster_record = (json.loads(path.read_text()) for path in (local, cluster))
    for record in (local_record, cluster_record):
        record.pop("git_commit", None)
        record.pop("git_tree", None)
    return local_record == cluster_record


def main() -> None:
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="slurm-smoke-"))
    root, local_dir, slurm_dir = scratch / "checkout", scratch / "local", scratch / "slurm"
    env = snapshot(root)
    print(f"scratch (kept if a check fails): {scratch}")

    # 4a. The reference: the same smoke config on this machine, alongside the SLURM run (whose
    # driver mostly waits).
    # REPLICATION_SLURM_REFERENCE: finished smoke runs (os.pathsep-separated) that together hold every target.
    local = None
    local_dirs = [local_dir]
    if os.environ.get("REPLICATION_SLURM_REFERENCE"):
        local_dirs = [Path(path) for path in os.environ["REPLICATION_SLURM_REFERENCE"].split(os.pathsep)]
        for target in TARGETS:
            if not any((folder / target).is_file() for folder in local_dirs):
                fail(f"REPLICATION_SLURM_REFERENCE={os.environ['REPLICATION_SLURM_REFERENCE']}: no finished {target}")
    else:
        with open(scratch / "local.log", "w") as log:
            local = subprocess.Popen(
                snakemake_command(root, local_dir, "local"), cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT
            )

    # 4b + 6. The SLURM run, one job cancelled mid-run.
    first_text, cancelled = run_and_cancel(root, env, slurm_dir, scratch / "slurm-cancelled.log")
    if local is not None and local.wait(timeout=RUN_TIMEOUT) != 0:
        fail(f"local run failed:\n{(scratch / 'local.log').read_text()[-4000:]}")
    first_jobs = check_submitted("cancelled run", first_text, slurm_dir, states(), {cancelled: "CANCELLED"})
    cancelled_job = next(job for job in first_jobs if job["slurm_id"] == cancelled)
    cancelled_rule = cancelled_job["rule"]
    # What the cancelled job may have left is not finished: the rerun redoes that job.
    finished = {path: stamp for path, stamp in outputs(slurm_dir).items() if path not in cancelled_job["outputs"]}
    print(
        f"cancelled run: {time.monotonic() - started:.0f} s, SLURM job {cancelled} ({cancelled_rule}) "
        f"cancelled; {len(finished)} output files finished before it"
    )
    if not finished:
        fail("no output was finished before the cancel")

    # 6. The rerun completes the pipeline and leaves the finished outputs alone.
    mark = time.monotonic()
    rerun = subprocess.run(
        snakemake_command(root, slurm_dir, "slurm", *CLUSTER_FLAGS),
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    rerun_text = rerun.stdout + rerun.stderr
    (scratch / "slurm-rerun.log").write_text(rerun_text)
    if rerun.returncode != 0:
        fail(f"rerun failed:\n{rerun_text[-4000:]}")
    rerun_jobs = check_submitted("rerun", rerun_text, slurm_dir, states(), {})
    redone = sorted({path for job in jobs_in_log(rerun_text)[0] for path in job["outputs"]} & set(finished))
    if redone:
        fail(f"the rerun rebuilt outputs finished before the cancel: {redone}")
    after = outputs(slurm_dir)
    touched = sorted(path for path, stamp in finished.items() if after.get(path) != stamp)
    if touched:
        fail(f"the rerun changed outputs finished before the cancel: {touched}")
    if not set(cancelled_job["outputs"]) <= {path for job in rerun_jobs for path in job["outputs"]}:
        fail(f"the rerun did not redo the cancelled job ({cancelled_rule})")
    print(
        f"rerun: {time.monotonic() - mark:.0f} s, {len(rerun_jobs)} sbatch jobs; "
        f"{len(finished)} finished outputs untouched (same mtime and sha256)"
    )

    # 5. Every figure file, byte for byte; the targets' manifests among them, so both runs made the same set.
    # (A reference directory may hold more, e.g. figures/diff/ from other targets.)
    local_figures, local_of = {}, {}
    for folder in local_dirs:
        for path, (_, digest) in outputs(folder).items():
            if path.startswith("figures/"):
                local_figures[path], local_of[path] = digest, folder
    slurm_figures = {path: digest for path, (_, digest) in after.items() if path.startswith("figures/")}
    missing = sorted(set(slurm_figures) - set(local_figures))
    absent = [target for target in TARGETS if target not in slurm_figures]
    if missing or absent:
        fail(f"figure files of the SLURM run missing from the local run: {missing or absent}")
    differing = sorted(
        path
        for path in slurm_figures
        if local_figures[path] != slurm_figures[path]
        and not (path.endswith(PROVENANCE_NAME) and same_provenance(local_of[path] / path, slurm_dir / path))
    )
    if differing:
        fail(f"figures differ between the local and the SLURM run: {differing}")
    print(f"figures: {len(slurm_figures)} files identical to the local run, byte for byte")
    shutil.rmtree(scratch)
    print(f"passed in {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
