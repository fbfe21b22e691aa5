"""The run lock of `make figures` (replication.pipeline_run): who holds it, what a second run sees,
which processes count as a live Snakemake, and the command that is started. No Snakemake runs here:
live runs are stood in for by sleeping processes named like Snakemake and by a fake /proc."""

import fcntl
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT
from replication import pipeline_run
from replication.pipeline_run import LiveRun, other_snakemake_processes, stale_locks, take_run_lock
from replication.snakemake_command import snakemake_command, snakemake_executable

SLEEPER = "import time; time.sleep(60)"


def open_descriptors() -> set[int]:
    return {int(name) for name in os.listdir("/proc/self/fd")}


def lock_is_free(path: Path) -> bool:
    """Whether an exclusive lock on ``path`` can be taken now (released at once if so)."""
    with open(path) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


@pytest.fixture
def processes():
    """Start sleeping processes (killed at the end); waits until each has its argv and cwd in /proc."""
    started = []

    def start(argv, cwd, executable=None):
        child = subprocess.Popen(argv, cwd=cwd, executable=executable)
        started.append(child)
        deadline = time.monotonic() + 10
        while True:  # between fork and exec, /proc shows the parent's command line
            try:
                if (Path("/proc") / str(child.pid) / "cmdline").read_bytes().split(b"\0")[0] == os.fsencode(argv[0]):
                    return child
            except OSError:
                pass
            assert time.monotonic() < deadline, "the child did not start"
            time.sleep(0.01)

    yield start
    for child in started:
        child.kill()
        child.wait()


@pytest.mark.timeout(30)
def test_processes_named_snakemake_in_the_folder_count_as_live(tmp_path, processes):
    here, elsewhere = tmp_path / "run", tmp_path / "other"
    here.mkdir()
    elsewhere.mkdir()
    script = tmp_path / "bin" / "snakemake"  # a script run by its interpreter: argv[1] is its path
    script.parent.mkdir()
    script.write_text(SLEEPER)
    decoy = tmp_path / "bin" / "sleeper.py"
    decoy.write_text(SLEEPER)
    by_name = processes(["snakemake", "-c", SLEEPER], here, executable=sys.executable)
    by_script = processes([sys.executable, str(script), "--cores", "1"], here)
    processes(["snakemake", "-c", SLEEPER], elsewhere, executable=sys.executable)  # another folder
    processes([sys.executable, str(decoy), "snakemake"], here)  # "snakemake" only as a later argument
    processes([sys.executable, "-c", SLEEPER, "--snakefile"], here)
    processes([b"\xff\xfe-not-utf8", "-c", SLEEPER], here, executable=sys.executable)  # an unreadable name
    assert other_snakemake_processes(here) == sorted([by_name.pid, by_script.pid])
    assert other_snakemake_processes(tmp_path) == []


def fake_proc(root: Path, entries: dict) -> Path:
    """A /proc with one folder per process: ``{pid: (argv, cwd)}``; argv None leaves out the cmdline
    (a process that exited while it was read), cwd None the cwd link."""
    for pid, (argv, cwd) in entries.items():
        folder = root / str(pid)
        folder.mkdir(parents=True)
        if argv is not None:
            (folder / "cmdline").write_bytes(b"\0".join(os.fsencode(arg) for arg in argv) + b"\0")
        if cwd is not None:
            (folder / "cwd").symlink_to(cwd)
    (root / "self").mkdir()  # not a process
    (root / "cpuinfo").write_text("")
    return root


def test_process_scan_of_a_fake_proc(tmp_path, monkeypatch):
    work, other = tmp_path / "work", tmp_path / "other"
    work.mkdir()
    other.mkdir()
    proc = fake_proc(
        tmp_path / "proc",
        {
            1: (["/sbin/init"], None),  # unreadable: skipped, the scan goes on
            5: (["/opt/env/bin/snakemake", "--cores", "2"], work),
            7: (["python3", "/opt/env/bin/snakemake", "all"], work),
            8: (["python3", "-m", "snakemake"], work),  # only in argv[2]
            9: (["snakemake"], other),
            11: (None, work),  # gone between the listing and the read
            12: (["snakemake"], None),
            13: (["snakemake", "-n"], work),  # this process: never counted
            20: (["bash", "-c", "snakemake"], work),
            21: (["/usr/bin/snakemake"], work),
        },
    )
    real_path = pipeline_run.Path
    monkeypatch.setattr(pipeline_run, "Path", lambda *parts: proc if parts == ("/proc",) else real_path(*parts))
    monkeypatch.setattr(pipeline_run.os, "getpid", lambda: 13)
    assert sorted(other_snakemake_processes(work)) == [5, 7, 21]
    assert other_snakemake_processes(other) == [9]


def test_the_lock_is_taken_held_and_marked_with_the_pid(tmp_path):
    workdir = tmp_path / "new" / "run"  # not there yet
    old = os.umask(0o022)
    try:
        fd = take_run_lock(workdir)
    finally:
        os.umask(old)
    try:
        lock = workdir / ".snakemake" / "run.flock"
        assert lock.read_text() == f"{os.getpid()}\n"
        assert stat.S_IMODE(lock.stat().st_mode) == 0o644
        assert os.get_inheritable(fd)  # Snakemake and its jobs keep it after exec
        assert not lock_is_free(lock)
        with open(lock) as handle:  # exclusive: not even a shared lock beside it
            with pytest.raises(BlockingIOError):
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        os.write(fd, b"")  # open for writing
    finally:
        os.close(fd)
    assert lock_is_free(lock)  # the kernel drops it with the last descriptor


def test_a_dead_run_leaves_its_lock_file_which_a_new_run_takes_over(tmp_path):
    state = tmp_path / ".snakemake"
    state.mkdir()
    (state / "run.flock").write_text("4000000000\nleftover of a longer record\n")  # the dead run's pid
    fd = take_run_lock(tmp_path)
    try:
        assert (state / "run.flock").read_text() == f"{os.getpid()}\n"
    finally:
        os.close(fd)


@pytest.mark.timeout(20)
def test_a_held_lock_stops_the_second_run_naming_the_holder(tmp_path):
    fd = take_run_lock(tmp_path)
    try:
        before = open_descriptors()
        with pytest.raises(LiveRun) as error:
            take_run_lock(tmp_path)
        assert str(error.value) == (
            f"a run of the pipeline is alive in {tmp_path} (process {os.getpid()}): wait for it to end "
            f"or stop it, then run the same command again"
        )
        assert error.value.__cause__ is None and error.value.__suppress_context__  # no BlockingIOError shown
        assert open_descriptors() == before  # the refused attempt closed its descriptor
        assert (tmp_path / ".snakemake" / "run.flock").read_text() == f"{os.getpid()}\n"  # left as it was
    finally:
        os.close(fd)


@pytest.mark.timeout(20)
def test_a_holder_that_wrote_no_pid_is_unknown(tmp_path):
    lock = tmp_path / ".snakemake" / "run.flock"
    lock.parent.mkdir()
    lock.write_text("")
    with open(lock) as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(LiveRun, match=r"\(process unknown\): wait"):
            take_run_lock(tmp_path)


@pytest.mark.timeout(20)
def test_a_garbled_holder_record_is_still_shown(tmp_path):
    """A lock file whose bytes are not text (a crash mid-write, another tool) still gives the message."""
    lock = tmp_path / ".snakemake" / "run.flock"
    lock.parent.mkdir()
    lock.write_bytes(b"12\xff34\n")
    with open(lock) as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(LiveRun, match="\\(process 12\ufffd34\\): wait"):
            take_run_lock(tmp_path)


def test_snakemake_started_outside_make_stops_the_run_and_frees_the_lock(tmp_path, monkeypatch):
    seen = []

    def live(workdir):
        seen.append(workdir)
        return [41, 42]

    monkeypatch.setattr(pipeline_run, "other_snakemake_processes", live)
    before = open_descriptors()
    with pytest.raises(LiveRun) as error:
        take_run_lock(tmp_path)
    assert str(error.value) == (
        f"Snakemake is running in {tmp_path} (process 41, 42), started outside `make`: wait for it "
        f"to end or stop it, then run the same command again"
    )
    assert seen == [tmp_path]
    assert open_descriptors() == before
    lock = tmp_path / ".snakemake" / "run.flock"
    assert lock_is_free(lock) and lock.read_text() == ""  # nothing recorded for a run that did not start
    monkeypatch.setattr(pipeline_run, "other_snakemake_processes", lambda workdir: [])
    os.close(take_run_lock(tmp_path))


def test_stale_locks(tmp_path):
    assert stale_locks(tmp_path) == []  # no .snakemake at all
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    assert stale_locks(tmp_path) == []
    for name in ("1.output.lock", "0.input.lock"):
        (locks / name).write_text("x")
    assert stale_locks(tmp_path) == [locks / "0.input.lock", locks / "1.output.lock"]


def test_command_and_executable(tmp_path):
    executable = str(Path(sys.executable).parent / "snakemake")
    assert snakemake_executable() == executable
    assert snakemake_command(tmp_path, "figures/all", "--cores", "2") == [
        executable,
        "--snakefile",
        str(ROOT / "workflow" / "Snakefile"),
        "--directory",
        str(tmp_path),
        "figures/all",
        "--cores",
        "2",
    ]
    # Another checkout's workflow (tests/workflow/test_plugin_paper.py runs a copy).
    other = tmp_path / "copy" / "workflow" / "Snakefile"
    assert snakemake_command("run", "-n", snakefile=other)[1:] == [
        "--snakefile",
        str(other),
        "--directory",
        "run",
        "-n",
    ]
