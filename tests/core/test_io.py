"""Atomic outputs: a write that fails part-way leaves the old file (or none) and no temporary file."""

import logging
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from replication import io


class Unprintable:
    """A cell whose text fails: pandas has already written the rows before it."""

    def __str__(self):
        raise OSError("disk full")


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_failure_part_way_through_keeps_the_old_file(tmp_path):
    target = tmp_path / "table.csv"
    target.write_text("old\n")
    with pytest.raises(OSError, match="disk full"):
        with io.atomic_path(target) as tmp:
            with open(tmp, "w") as handle:
                handle.write("new, half written")
                handle.flush()
                assert tmp.read_text() == "new, half written"  # bytes did reach the disk
                raise OSError("disk full")
    assert target.read_text() == "old\n"
    assert _leftovers(tmp_path) == []


def test_write_csv_failing_mid_table_leaves_old_or_no_file(tmp_path):
    rows = [1.5] * 5000 + [Unprintable()]  # many rows are written before the last one fails
    frame = pd.DataFrame({"x": rows})
    fresh = tmp_path / "sub" / "fresh.csv"
    with pytest.raises(OSError, match="disk full"):
        io.write_csv(frame, fresh)
    assert not fresh.exists() and _leftovers(fresh.parent) == []
    existing = tmp_path / "existing.csv"
    io.write_csv(pd.DataFrame({"x": [0.25]}), existing)
    with pytest.raises(OSError, match="disk full"):
        io.write_csv(frame, existing)
    assert existing.read_text() == "x\n0.25\n"
    assert _leftovers(tmp_path) == []


def test_temporary_file_sits_beside_the_target_until_the_rename(tmp_path):
    target = tmp_path / "deep" / "er" / "out.txt"
    with io.atomic_path(target) as tmp:
        assert tmp.parent == target.parent and tmp.name.startswith(".out.txt.") and tmp.suffix == ".txt"
        tmp.write_text("done")
        assert not target.exists()  # nothing at the final path before success
    assert target.read_text() == "done"
    assert _leftovers(target.parent) == []


def test_outputs_are_readable_by_others(tmp_path):
    old = os.umask(0o022)
    try:
        io.write_text("x", tmp_path / "a.txt")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644


def test_writers_round_trip(tmp_path):
    frame = pd.DataFrame({"a": [1, 2], "b": [1 / 3, 2.0e-12]})
    io.write_csv(frame, tmp_path / "f.csv")
    # no index column, floats to 10 significant digits
    assert (tmp_path / "f.csv").read_text() == "a,b\n1,0.3333333333\n2,2e-12\n"
    io.write_npz(tmp_path / "a.npz", x=np.arange(3), y=np.eye(2))
    with np.load(tmp_path / "a.npz") as data:
        assert sorted(data.files) == ["x", "y"]
        assert np.array_equal(data["x"], np.arange(3)) and np.array_equal(data["y"], np.eye(2))
    io.write_text("hello\n", tmp_path / "t.md")
    assert (tmp_path / "t.md").read_text() == "hello\n"


def test_log_to_sends_stderr_and_the_logger_to_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stderr", sys.stderr)  # restored after the test
    root = logging.getLogger()
    monkeypatch.setattr(root, "level", root.level)  # restored after the test
    root.setLevel(logging.WARNING)  # as in a fresh job (setLevel also clears the loggers' caches)
    before = sys.stderr
    assert io.log_to(None).name == "replication" and sys.stderr is before  # no log file: stderr stays
    fresh = tmp_path / "new" / "deep" / "run.log"
    io.log_to(fresh).info("first")
    sys.stderr.close()
    assert fresh.read_text().endswith("INFO first\n")
    path = tmp_path / "logs" / "job" / "run.log"
    path.parent.mkdir(parents=True)
    path.write_text("a previous attempt\n")
    logger = io.log_to(path)
    assert logger.name == "replication"
    logger.info("started")
    logger.debug("details")
    logging.getLogger("fontTools.subset").info("Glyph names: [...]")  # another library's chatter: left out
    sys.stderr.write("progress")
    assert path.read_text().endswith("progress") is False  # a partial line may wait in the buffer
    sys.stderr.write("\n")
    assert path.read_text().endswith("progress\n")  # line-buffered: a finished line is in the file
    sys.stderr.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and lines[1] == "progress"  # the previous attempt's log is replaced
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO started", lines[0])
    warned = tmp_path / "warned.log"
    io.log_to(warned)
    logging.getLogger("fontTools.subset").warning("a glyph is missing")  # its warnings still come through
    sys.stderr.close()
    assert warned.read_text().endswith("WARNING a glyph is missing\n")
    logging.basicConfig(stream=sys.__stderr__, force=True)


def test_a_killed_writer_leaves_a_partial_file_that_the_resumed_run_removes(tmp_path):
    target = tmp_path / "results" / "losses.csv"
    target.parent.mkdir()
    target.write_text("old\n")
    keep = tmp_path / "results" / ".keep"
    keep.write_text("")
    # A writer killed mid-write: no exception handling, no clean-up (os._exit, like SIGKILL).
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys; from replication import io\n"
            "with io.atomic_path(sys.argv[1]) as tmp:\n"
            "    tmp.write_text('new, half written')\n"
            "    os._exit(9)\n",
            str(target),
        ],
        check=False,
        # The package this test imported (under mutation testing, the mutated copy), not the installed one.
        env={**os.environ, "PYTHONPATH": str(Path(io.__file__).resolve().parents[1])},
    )
    assert child.returncode == 9
    partial = [path for path in target.parent.iterdir() if path.name not in {"losses.csv", ".keep"}]
    assert len(partial) == 1 and partial[0].match(io.TEMPORARY_GLOB)
    assert target.read_text() == "old\n"

    assert io.remove_stale_temporaries([tmp_path / "results", tmp_path / "absent"]) == partial
    assert sorted(path.name for path in target.parent.iterdir()) == [".keep", "losses.csv"]
    assert target.read_text() == "old\n"
