"""A job's cost line from the kernel's counts, in this process: the wall clock since the process
started read from /proc, the CPU seconds and peak memory of the process and its children, and the
line written to a job's log when it ends."""

from __future__ import annotations

import io
import resource
import sys
import time
from types import SimpleNamespace

import psutil
import pytest

from replication import job_cost

# /proc/self/stat of a process whose name holds ")" and spaces: the fields are counted after the last ")".
STAT = "4242 (job (x) y) " + " ".join(["S", *map(str, range(4, 22)), "4200", "23", "24"]) + "\n"


class FakeStat:
    def __init__(self, path):
        assert str(path) == "/proc/self/stat"

    def read_text(self):
        return STAT


def test_the_wall_clock_since_start_counts_from_the_processs_start_tick(monkeypatch):
    monkeypatch.setattr(job_cost, "Path", FakeStat)
    monkeypatch.setattr(job_cost.os, "sysconf", lambda name: {"SC_CLK_TCK": 100}[name])
    monkeypatch.setattr(job_cost.time, "clock_gettime", lambda clock: {time.CLOCK_BOOTTIME: 5000.5}[clock])
    # field 22, the start: 4200 ticks of 1/100 s after boot
    assert job_cost.seconds_since_start() == pytest.approx(4958.5)


def test_the_wall_clock_since_start_of_this_process():
    assert job_cost.seconds_since_start() == pytest.approx(time.time() - psutil.Process().create_time(), abs=1.0)


def test_the_cost_line_adds_the_children_to_the_process(monkeypatch):
    usage = {
        resource.RUSAGE_SELF: SimpleNamespace(ru_utime=1.25, ru_stime=0.5, ru_maxrss=204800),
        resource.RUSAGE_CHILDREN: SimpleNamespace(ru_utime=3.0, ru_stime=0.25, ru_maxrss=409600),
    }
    monkeypatch.setattr(job_cost.resource, "getrusage", usage.__getitem__)
    monkeypatch.setattr(job_cost, "seconds_since_start", lambda: 12.5)
    line = job_cost.cost_line("train")
    assert line == ("job cost (kernel): rule=train cpu_s=5.00 user_s=4.25 system_s=0.75 wall_s=12.50 max_rss_mb=400.00")
    assert job_cost.parse(line) == {
        "rule": "train", "cpu_s": 5.0, "user_s": 4.25, "system_s": 0.75, "wall_s": 12.5, "max_rss_mb": 400.0
    }  # fmt: skip


def test_the_cost_line_of_this_process_is_read_back():
    cost = job_cost.parse(job_cost.cost_line("here"))
    assert cost["rule"] == "here" and cost["cpu_s"] > 0 and 10 < cost["max_rss_mb"] < 100_000


class Stream(io.StringIO):
    """A log that records when it was flushed and what it held then."""

    def __init__(self):
        super().__init__()
        self.flushed = []

    def flush(self):
        self.flushed.append(self.getvalue())


def test_the_cost_line_ends_the_log(monkeypatch):
    """After the collector is kept off every object left, so that the exit's last collection, which
    the line cannot count, has next to nothing to do."""
    stream, events = Stream(), []
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(job_cost.gc, "freeze", lambda: events.append("freeze"))
    monkeypatch.setattr(job_cost, "cost_line", lambda rule: events.append("count") or f"cost of {rule}")
    job_cost._write_cost_line("train")
    assert stream.getvalue() == "cost of train\n" and stream.flushed == ["cost of train\n"]
    assert events == ["freeze", "count"]


@pytest.mark.parametrize("closed", [True, False])
def test_no_cost_line_without_an_open_log(monkeypatch, closed):
    """At exit the log may be gone (None) or closed: the job ends as it would have."""
    stream = Stream()
    stream.close()
    monkeypatch.setattr(sys, "stderr", stream if closed else None)
    monkeypatch.setattr(job_cost.gc, "freeze", lambda: None)
    monkeypatch.setattr(job_cost, "cost_line", lambda rule: f"cost of {rule}")
    job_cost._write_cost_line("train")
