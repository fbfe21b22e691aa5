"""Run Snakemake so that a stopped run resumes with the same command (``make figures``).

Snakemake leaves two things behind when it is killed: its locks in ``.snakemake/locks`` (the next
run refuses to start) and the incomplete markers of the jobs that were running (the next run
stops with IncompleteFilesException). Clearing a lock is safe only when no run is alive, which
the lock files themselves cannot tell. So every run started here holds a kernel lock (``flock``)
on ``.snakemake/run.flock`` for as long as it or any of its jobs lives (the descriptor is
inherited, and the kernel drops the lock when the last holder dies, however it died):

- lock taken: no run started here is alive; if no other Snakemake process works in the folder
  either, leftover Snakemake locks belong to a dead run and are cleared (``--unlock``); the run
  starts with ``--rerun-incomplete``, so outputs of interrupted jobs are redone and finished
  outputs (written atomically) are kept, and the temporary files of writes cut short are removed;
- lock held: a run is alive; stop with a message naming its process, touch nothing.

Ctrl-C reaches make, this process, Snakemake and every job at once (the terminal signals the whole
process group), and each would print its own traceback. Snakemake's output passes through here
(``relay``): from the interrupt on it is held back from the terminal and appended to Snakemake's
log of the run, and the run ends with one line: stopped, the finished jobs kept, the command that
resumes it. A config file that does not exist stops the run before anything is created.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

from .command_line import command_parser, configfiles, missing_configfiles
from .io import remove_stale_temporaries
from .make_command import CONFIG_DIR, make_command, option_value, python_command, shown_path
from .snakemake_command import SNAKEFILE, snakemake_command

LOCK_NAME = "run.flock"
OUTPUT_FOLDERS = ("results", "figures")  # where jobs write, atomically
# Exit status of a run stopped by Ctrl-C (128 + SIGINT, as a shell reports it). Under make it is 0:
# make got the same Ctrl-C and ends with that status itself; a failure here would add its own line.
INTERRUPTED = 128 + signal.SIGINT
# Once Snakemake has exited, how long output of a process it left behind is still waited for.
DRAIN_S = 3.0


class LiveRun(RuntimeError):
    """Another run of the pipeline is alive in the same folder."""


def other_snakemake_processes(workdir: Path) -> list[int]:
    """Ids of Snakemake processes (not this one) whose working folder is ``workdir`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        pid = int(entry.name)
        if pid == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")[:3]
            cwd = Path(os.readlink(entry / "cwd"))
        except OSError:  # gone, or not ours to read
            continue
        names = [os.path.basename(arg.decode(errors="replace")) for arg in argv]
        if "snakemake" in names[:2] and cwd == workdir:
            found.append(pid)
    return found


def take_run_lock(workdir: Path) -> int:
    """An inheritable descriptor holding the exclusive run lock of ``workdir``; LiveRun if it is held."""
    state = workdir / ".snakemake"
    state.mkdir(parents=True, exist_ok=True)
    fd = os.open(state / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise LiveRun(
            f"a run of the pipeline is alive in {workdir} (process {holder}): wait for it to end "
            f"or stop it, then run the same command again"
        ) from None
    live = other_snakemake_processes(workdir)
    if live:
        os.close(fd)
        raise LiveRun(
            f"Snakemake is running in {workdir} (process {', '.join(map(str, live))}), started "
            f"outside `make`: wait for it to end or stop it, then run the same command again"
        )
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    os.set_inheritable(fd, True)
    return fd


def stale_locks(workdir: Path) -> list[Path]:
    locks = workdir / ".snakemake" / "locks"
    return sorted(locks.iterdir()) if locks.is_dir() else []


def write_through(stream, data: bytes) -> None:
    """``data`` onto ``stream`` (sys.stdout or sys.stderr, or a test's text stand-in) at once."""
    stream.flush()
    if hasattr(stream, "buffer"):
        stream.buffer.write(data)
        stream.buffer.flush()
    else:
        stream.write(data.decode(errors="replace"))


def relay(child: subprocess.Popen, interrupted: list) -> tuple[bytes, bool]:
    """Copy the child's stdout and stderr onto ours as they come, until both close; once
    ``interrupted`` holds anything, hold what follows back instead. Returns what was held, and
    whether the terminal was left inside a line (a line cut by the interrupt)."""
    streams = {child.stdout.fileno(): sys.stdout, child.stderr.fileno(): sys.stderr}
    held, idle_since, open_line = bytearray(), None, False
    with selectors.DefaultSelector() as selector:
        for fd in streams:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            ready = selector.select(timeout=0.5)
            if not ready and child.poll() is not None:
                idle_since = idle_since or time.monotonic()
                if time.monotonic() - idle_since > DRAIN_S:
                    break  # a process Snakemake left behind holds the pipe: not ours to wait for
            for key, _ in ready:
                data = os.read(key.fd, 1 << 16)
                if not data:
                    selector.unregister(key.fd)
                elif interrupted:
                    held += data
                else:
                    write_through(streams[key.fd], data)
                    open_line = not data.endswith(b"\n")
    return bytes(held), open_line


def run_log(workdir: Path, started: float) -> Path | None:
    """Snakemake's log of the run started at ``started`` (seconds since the epoch) in ``workdir``."""
    logs = [p for p in (workdir / ".snakemake" / "log").glob("*.snakemake.log") if p.stat().st_mtime >= started - 1]
    return max(logs, default=None)


def stopped_line(resume: str, log: Path | None) -> str:
    """What a run stopped by Ctrl-C ends with: one line, the command that resumes it in it."""
    where = f" (Snakemake's log of the run: {shown_path(log)})" if log else ""
    return f"Stopped: the finished jobs are kept; run the same command to resume: {resume}{where}"


def run_relayed(command: list[str], lock: int, workdir: Path, resume: str, interrupt_status: int) -> int:
    """Run ``command`` holding the run lock ``lock``, its output relayed (``relay``); its exit
    status, or after Ctrl-C the one line of ``stopped_line`` and ``interrupt_status``."""
    interrupted: list = []
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(True)), signal.getsignal(signal.SIGTERM)
    started = time.time()
    try:
        # Unbuffered: through a pipe, Python's output (Snakemake's, its jobs') would come in blocks.
        environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
        child = subprocess.Popen(
            command, pass_fds=(lock,), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment
        )
        # A plain `kill` of this process reaches Snakemake, which stops its jobs (they have the lock).
        signal.signal(signal.SIGTERM, lambda number, _: child.send_signal(number))
        with child:
            held, open_line = relay(child, interrupted)
            code = child.wait()
    finally:
        signal.signal(signal.SIGINT, previous[0])
        signal.signal(signal.SIGTERM, previous[1])
        os.close(lock)
    if not interrupted or code == 0:  # not stopped after all: the run's output as it came
        write_through(sys.stderr, held)
        return code
    log = run_log(workdir, started)
    if log is not None and held:
        with open(log, "ab") as kept:
            kept.write(b"\n# What Snakemake printed after Ctrl-C (held back from the terminal):\n" + held)
    # On a line of its own, also when the interrupt cut the line before it short.
    print("\n" * open_line + stopped_line(resume, log), file=sys.stderr, flush=True)
    return interrupt_status


def resume_command(args: argparse.Namespace, rest: list[str], argv: list[str]) -> str:
    """The command that started this run: ``--resume-command``, else ``make GOAL`` with this run's
    CONFIG, CORES and WORKDIR, else this process's own command line."""
    if args.resume_command:
        return args.resume_command
    if args.make_goal:
        config = next(iter(configfiles(rest)), None)
        return make_command(args.make_goal, config, cores=option_value(rest, "--cores"), workdir=args.directory)
    return python_command("replication.pipeline_run", argv)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = command_parser(__spec__, __doc__)
    parser.add_argument("--directory", default=".", help="the working folder of the run (default: here)")
    parser.add_argument("--snakefile", default=str(SNAKEFILE), help="the workflow (default: the project's)")
    parser.add_argument(
        "--make-goal",
        help="run by `make GOAL`: a Ctrl-C names the make command that resumes and exits 0 (make ends with 130)",
    )
    parser.add_argument("--resume-command", help="the command a Ctrl-C names as the one that resumes the run")
    parser.add_argument("snakemake_args", nargs=argparse.REMAINDER, help="targets and options for Snakemake, after --")
    return parser.parse_args(argv)


def snakemake_arguments(args: argparse.Namespace) -> list[str]:
    """The targets and options for Snakemake (what follows ``--``)."""
    return args.snakemake_args[1:] if args.snakemake_args[:1] == ["--"] else args.snakemake_args


def main(argv: list[str] | None = None) -> int:
    """Run Snakemake under the run lock, its output relayed; its exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_arguments(argv)
    workdir, snakefile, rest = Path(args.directory).resolve(), Path(args.snakefile).resolve(), snakemake_arguments(args)
    missing = missing_configfiles(rest)
    if missing:  # before the lock: a mistyped CONFIG leaves no folder behind
        known = ", ".join(shown_path(path) for path in sorted(CONFIG_DIR.glob("*.yaml")))
        named = ", ".join(shown_path(path) for path in missing)
        print(f"Not started: config file not found: {named}; the config files: {known}", file=sys.stderr)
        return 1
    try:
        fd = take_run_lock(workdir)
    except LiveRun as error:
        print(f"Not started: {error}", file=sys.stderr)
        return 1
    resume, interrupt_status = resume_command(args, rest, argv), 0 if args.make_goal else INTERRUPTED
    try:
        clear_what_a_killed_run_left(workdir, rest, snakefile, fd)
    except KeyboardInterrupt:
        os.close(fd)
        print(stopped_line(resume, None), file=sys.stderr, flush=True)
        return interrupt_status
    run = snakemake_command(workdir, "--rerun-incomplete", *rest, snakefile=snakefile)
    return run_relayed(run, fd, workdir, resume, interrupt_status)


def clear_what_a_killed_run_left(workdir: Path, rest: list[str], snakefile: Path, lock: int) -> None:
    """The partial files of writes cut short and Snakemake's lock, left by a run that no longer exists."""
    removed = remove_stale_temporaries(workdir / folder for folder in OUTPUT_FOLDERS)
    if removed:
        print(f"Removed {len(removed)} partial file(s) of writes cut short by a killed run", flush=True)
    if stale_locks(workdir):
        print(f"Clearing the Snakemake lock left by a run that no longer exists in {workdir}", flush=True)
        unlock = snakemake_command(workdir, *rest, "--unlock", snakefile=snakefile)
        subprocess.run(unlock, check=True, pass_fds=(lock,))


if __name__ == "__main__":
    sys.exit(main())
