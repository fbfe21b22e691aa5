"""The run lock of `make figures` (replication.pipeline_run): who holds it, what a second run sees,
which processes count as a live Snakemake, and the command that is started. No Snakemake runs here:
live runs are stood in for by sleeping processes named like Snakemake and by a fake /proc."""

import fcntl
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import ROOT
from replication import pipeline_run
from replication.command_line import configfiles
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


@pytest.mark.timeout(20)
def test_a_long_holder_record_is_shown_by_its_first_64_bytes(tmp_path):
    """A pid is a few digits: of a record that is not one, the message shows no more than 64 bytes."""
    lock = tmp_path / ".snakemake" / "run.flock"
    lock.parent.mkdir()
    lock.write_text("7" * 64 + "8" * 36 + "\n")
    with open(lock) as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(LiveRun) as error:
            take_run_lock(tmp_path)
    assert f"(process {'7' * 64}): wait" in str(error.value)


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


# --- Ctrl-C: one line, the command that resumes --------------------------------------------------

# Stands in for Snakemake: a line of a finished job, then, on SIGINT, what Snakemake and its jobs
# print (a traceback, "Error in rule") and its log file, as a real run does.
FAKE_SNAKEMAKE = """
import os, sys, time
from pathlib import Path
log = Path(".snakemake/log/2026-01-01T000000.000000.snakemake.log")
log.parent.mkdir(parents=True, exist_ok=True)
log.write_text("Building DAG of jobs...\\n")
print("Finished jobid: 1 (Rule: first)", flush=True)
Path("started").write_text(str(os.getpid()))
try:
    time.sleep(60)
except KeyboardInterrupt:
    print("Terminating processes on user request, this might take some time.", file=sys.stderr, flush=True)
    print("Traceback (most recent call last):\\nKeyboardInterrupt\\nError in rule second:", file=sys.stderr)
    sys.exit(1)
"""


def interrupt_when_started(workdir: Path, child_too: bool = True) -> threading.Thread:
    """SIGINT to this process and the stand-in, as a terminal's Ctrl-C sends it to the whole group."""

    def send():
        deadline = time.monotonic() + 20
        while not (workdir / "started").exists():
            assert time.monotonic() < deadline, "the stand-in did not start"
            time.sleep(0.05)
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGINT)
        if child_too:
            os.kill(int((workdir / "started").read_text()), signal.SIGINT)

    thread = threading.Thread(target=send)
    thread.start()
    return thread


@pytest.mark.timeout(60)
@pytest.mark.parametrize("make_goal", [True, False])
def test_ctrl_c_ends_with_one_line_naming_the_command_that_resumes(tmp_path, capfd, monkeypatch, make_goal):
    monkeypatch.chdir(tmp_path)  # the stand-in writes its log where Snakemake would: the working folder
    before = signal.getsignal(signal.SIGINT)  # pytest's, or ignored where the suite runs in the background
    lock = take_run_lock(tmp_path)
    resume = "make figures CONFIG=config/smoke.yaml"
    status = 0 if make_goal else pipeline_run.INTERRUPTED
    sender = interrupt_when_started(tmp_path)
    code = pipeline_run.run_relayed([sys.executable, "-c", FAKE_SNAKEMAKE], lock, tmp_path, resume, status)
    sender.join()
    assert code == status
    out, err = capfd.readouterr()
    assert "Finished jobid: 1" in out  # what came before the Ctrl-C, as it came
    assert "Traceback" not in out + err and "Error in rule" not in out + err and "Terminating" not in err
    log = tmp_path / ".snakemake/log/2026-01-01T000000.000000.snakemake.log"
    stopped = f"Stopped: the finished jobs are kept; run the same command to resume: {resume}"
    assert err.strip().splitlines() == [f"{stopped} (Snakemake's log of the run: {log})"]
    assert "Traceback (most recent call last)" in log.read_text()  # kept for whoever wants it
    assert lock_is_free(tmp_path / ".snakemake" / "run.flock")  # the descriptor was closed
    assert signal.getsignal(signal.SIGINT) is before  # the handler it found, back


@pytest.mark.timeout(60)
def test_the_resume_line_starts_a_line_of_its_own_after_a_line_the_interrupt_cut(tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cut = FAKE_SNAKEMAKE.replace(
        'Path("started")', 'print("3 of 39 steps (8%) do", end="", file=sys.stderr, flush=True)\nPath("started")'
    )
    lock = take_run_lock(tmp_path)
    sender = interrupt_when_started(tmp_path)
    pipeline_run.run_relayed([sys.executable, "-c", cut], lock, tmp_path, "make figures", 0)
    sender.join()
    _, err = capfd.readouterr()
    lines = err.splitlines()
    assert lines[0] == "3 of 39 steps (8%) do"  # as it came, then the resume line below it
    assert lines[1].startswith("Stopped: the finished jobs are kept; run the same command to resume: make figures")
    assert len(lines) == 2


@pytest.mark.timeout(60)
def test_a_run_that_ends_by_itself_passes_its_output_and_status_through(tmp_path, capfd):
    script = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"
    lock = take_run_lock(tmp_path)
    assert pipeline_run.run_relayed([sys.executable, "-c", script], lock, tmp_path, "make figures", 0) == 3
    out, err = capfd.readouterr()
    assert (out, err) == ("out\n", "err\n")


def test_the_resume_command_is_the_make_command_that_started_the_run(tmp_path):
    def resume(*argv):
        args = pipeline_run.parse_arguments(list(argv))
        return pipeline_run.resume_command(args, pipeline_run.snakemake_arguments(args), list(argv))

    smoke = str(ROOT / "config" / "smoke.yaml")
    common = ["--make-goal", "figures", "--", "figures/all", "--cores"]
    assert resume("--directory", str(ROOT / "variants/smoke"), *common, "all", "--configfile", smoke) == (
        "make figures CONFIG=config/smoke.yaml"
    )
    assert resume("--directory", str(tmp_path), *common, "2", "--configfile", smoke) == (
        f"make figures CONFIG=config/smoke.yaml CORES=2 WORKDIR={tmp_path}"
    )
    paper = str(ROOT / "config" / "config.yaml")
    assert resume("--directory", str(ROOT), *common, "all", "--configfile", paper) == "make figures"
    given = ["--directory", ".", "--resume-command", "make plateau VARIANT=plateau", "--make-goal", "plateau"]
    assert resume(*given) == "make plateau VARIANT=plateau"
    assert resume("--directory", "run", "--", "figures/all").endswith(
        "-m replication.pipeline_run --directory run -- figures/all"
    )
    # No --configfile: the Makefile's default CONFIG, the paper's.
    assert resume("--directory", str(ROOT), "--make-goal", "figures", "--", "figures/all") == "make figures"


def test_snakemake_gets_what_follows_the_double_dash():
    def snakemake_arguments(*argv):
        return pipeline_run.snakemake_arguments(pipeline_run.parse_arguments(list(argv)))

    assert snakemake_arguments("--directory", "run", "--", "figures/all", "--cores", "2") == [
        "figures/all",
        "--cores",
        "2",
    ]
    assert snakemake_arguments("--", "--", "x") == ["--", "x"]  # only the first separates
    assert snakemake_arguments("figures/all", "--cores", "2") == ["figures/all", "--cores", "2"]
    assert snakemake_arguments("--directory", "run") == []


def test_config_files_of_a_snakemake_command_line():
    assert configfiles(["figures/all", "--configfile", "a.yaml", "b.yaml", "--cores", "2", "figures/x.pdf"]) == [
        "a.yaml",
        "b.yaml",
    ]
    assert configfiles(["--configfile=a.yaml", "figures/all", "--configfiles", "b.yaml", "-n", "c"]) == [
        "a.yaml",
        "b.yaml",
    ]
    assert configfiles(["figures/all", "--cores", "2"]) == []


def test_the_cores_are_read_from_either_spelling_of_the_option():
    from replication.make_command import option_value

    assert option_value(["figures/all", "-n", "--cores", "2"], "--cores") == "2"  # the last word
    assert option_value(["figures/all", "--cores=3"], "--cores") == "3"
    assert option_value(["--set=a.b=c"], "--set") == "a.b=c"  # the value keeps its own "="
    assert option_value(["figures/all", "--cores"], "--cores") is None  # the value missing
    assert option_value(["--cores"], "--cores") is None
    assert option_value(["--cores-per-job", "4", "--coresx=2"], "--cores") is None


def test_a_config_file_that_does_not_exist_stops_before_anything_is_created(tmp_path, capsys):
    workdir = tmp_path / "variants" / "smokee"
    typo = ROOT / "config" / "smokee.yaml"
    argv = ["--directory", str(workdir), "--make-goal", "figures", "--", "figures/all", "--configfile", str(typo)]
    assert pipeline_run.main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("Not started: config file not found: config/smokee.yaml;")
    assert "config/config.yaml, config/smoke.yaml" in err
    assert not (tmp_path / "variants").exists()


HELD_HEADER = "\n# What Snakemake printed after Ctrl-C (held back from the terminal):\n"


@pytest.mark.timeout(60)
def test_what_came_before_the_ctrl_c_is_shown_though_snakemake_did_not_flush_it(tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # the run sets it itself
    unflushed = FAKE_SNAKEMAKE.replace('(Rule: first)", flush=True)', '(Rule: first)")')
    assert unflushed != FAKE_SNAKEMAKE
    lock = take_run_lock(tmp_path)
    sender = interrupt_when_started(tmp_path)
    assert pipeline_run.run_relayed([sys.executable, "-c", unflushed], lock, tmp_path, "make figures", 0) == 0
    sender.join()
    out, _ = capfd.readouterr()
    assert out == "Finished jobid: 1 (Rule: first)\n"  # through a pipe too, Python's output comes at once
    log = (tmp_path / ".snakemake/log/2026-01-01T000000.000000.snakemake.log").read_text()
    assert log.startswith("Building DAG of jobs...\n" + HELD_HEADER) and log.rstrip().endswith("Error in rule second:")


@pytest.mark.timeout(60)
def test_a_run_stopped_before_snakemake_wrote_its_log_names_none(tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)
    without_log = FAKE_SNAKEMAKE.replace('log.write_text("Building DAG of jobs...\\n")', "")
    assert without_log != FAKE_SNAKEMAKE
    lock = take_run_lock(tmp_path)
    sender = interrupt_when_started(tmp_path)
    code = pipeline_run.run_relayed([sys.executable, "-c", without_log], lock, tmp_path, "make figures", 130)
    sender.join()
    assert code == 130
    _, err = capfd.readouterr()
    assert err == "Stopped: the finished jobs are kept; run the same command to resume: make figures\n"


@pytest.mark.timeout(60)
def test_snakemake_holds_the_run_lock_and_a_kill_of_the_runner_reaches_it(tmp_path, capfd, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lock = take_run_lock(tmp_path)
    # Stands in for Snakemake: takes the run lock it inherited (fails without it), then waits to be stopped.
    script = (
        f"import fcntl, time; from pathlib import Path; fcntl.flock({lock}, fcntl.LOCK_EX | fcntl.LOCK_NB); "
        "print('holds the run lock', flush=True); Path('started').write_text('1'); time.sleep(20)"
    )

    def kill_when_started():
        deadline = time.monotonic() + 20
        while not (tmp_path / "started").exists():
            assert time.monotonic() < deadline, "the stand-in did not start"
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGTERM)  # `kill` of the runner

    def on_interrupt(*_):
        raise AssertionError("not an interrupt")

    def on_terminate(*_):
        raise AssertionError("not forwarded")

    before = signal.signal(signal.SIGINT, on_interrupt), signal.signal(signal.SIGTERM, on_terminate)
    try:
        killer = threading.Thread(target=kill_when_started)
        killer.start()
        code = pipeline_run.run_relayed([sys.executable, "-c", script], lock, tmp_path, "make figures", 0)
        killer.join()
        handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])
    assert code == -signal.SIGTERM  # Snakemake got the signal and ended by it
    assert capfd.readouterr().out == "holds the run lock\n"
    assert handlers == (on_interrupt, on_terminate)  # the handlers it found, back
