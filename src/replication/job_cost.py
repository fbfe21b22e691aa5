"""What a pipeline job cost, counted by the kernel, as the last line of its log.

Snakemake's ``benchmark:`` files sample a job's processes now and then and miss what ran between
samples, so they undercount CPU time. A job that sends its log through ``io.log_to`` instead ends
it with one line from the kernel's own counts (``resource.getrusage`` of the job's process and its
children): its rule, CPU seconds (user + system), wall seconds since the process started and
peak memory. ``job_costs`` reads those lines back from a tree's logs, one row per job.

Only a Snakemake job writes the line (its script's namespace holds the ``snakemake`` object,
which names the rule); a library call of ``log_to`` elsewhere leaves its log as it was.
"""

from __future__ import annotations

import atexit
import gc
import os
import re
import resource
import sys
import time
from pathlib import Path

import pandas as pd

PREFIX = "job cost (kernel):"
FIELDS = ("cpu_s", "user_s", "system_s", "wall_s", "max_rss_mb")
LINE = re.compile(rf"^{re.escape(PREFIX)} rule=(\S+)" + "".join(rf" {name}=([0-9.]+)" for name in FIELDS) + r"\s*$")

_registered = False


def snakemake_rule() -> str | None:
    """The rule of the Snakemake job this process runs (its ``script:``), or None outside a job."""
    job = getattr(sys.modules.get("__main__"), "snakemake", None)
    rule = getattr(job, "rule", None)
    return rule if isinstance(rule, str) and rule else None


def seconds_since_start() -> float:
    """Wall seconds since this process started, both ends counted from boot (the process's start in
    clock ticks, /proc/self/stat, and CLOCK_BOOTTIME): to the tick, where a start time in epoch
    seconds would carry the boot time's whole-second rounding."""
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 of stat(5), after pid and name
    return time.clock_gettime(time.CLOCK_BOOTTIME) - started


def cost_line(rule: str) -> str:
    """This process's cost so far, with its waited-for children's, as the log's last line."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = own.ru_utime + children.ru_utime, own.ru_stime + children.ru_stime
    wall = seconds_since_start()
    peak_mb = max(own.ru_maxrss, children.ru_maxrss) / 1024  # Linux counts ru_maxrss in KiB
    values = (user + system, user, system, wall, peak_mb)
    return f"{PREFIX} rule={rule} " + " ".join(f"{name}={value:.2f}" for name, value in zip(FIELDS, values))


def _write_cost_line(rule: str) -> None:
    stream = sys.stderr
    gc.freeze()  # before the count: what is left of the exit is then the kernel's, not the collector's
    if stream is not None and not stream.closed:
        stream.write(cost_line(rule) + "\n")
        stream.flush()


def record_at_exit() -> None:
    """In a Snakemake job, write the cost line to stderr (the job's log) when the process ends.

    And keep the garbage collector off what the job has imported so far (``gc.freeze``): those
    objects live until the process ends, and the collections that would traverse them, the last
    one at the interpreter's exit above all, cost a job with torch about 0.4 CPU-s and a smaller
    one 0.1-0.2 (docs/performance.md). A frozen object is never collected, and the process frees it
    as it ends."""
    global _registered
    rule = snakemake_rule()
    if rule and not _registered:
        gc.freeze()
        atexit.register(_write_cost_line, rule)
        _registered = True


def parse(line: str) -> dict | None:
    """The fields of a cost line (rule and floats), or None for any other line."""
    match = LINE.match(line)
    if not match:
        return None
    return {"rule": match.group(1), **{name: float(v) for name, v in zip(FIELDS, match.groups()[1:])}}


def job_costs(logs: str | Path) -> pd.DataFrame:
    """One row per job log under ``logs`` that ends with a cost line: rule, log (below ``logs``) and
    the line's fields; a job killed before its end has none and is left out."""
    logs = Path(logs)
    rows = []
    for path in sorted(logs.rglob("*.log")):
        lines = path.read_text(errors="replace").splitlines()
        cost = parse(lines[-1]) if lines else None
        if cost:
            rows.append({"rule": cost.pop("rule"), "log": str(path.relative_to(logs)), **cost})
    return pd.DataFrame(rows, columns=["rule", "log", *FIELDS])
