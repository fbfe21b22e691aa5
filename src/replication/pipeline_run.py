"""Run Snakemake so that a killed run resumes with the same command (``make figures``).

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
"""

from __future__ import annotations

import argparse
import fcntl
import os
import subprocess
import sys
from pathlib import Path

from .io import remove_stale_temporaries
from .snakemake_command import SNAKEFILE, snakemake_command, snakemake_executable

LOCK_NAME = "run.flock"
OUTPUT_FOLDERS = ("results", "figures")  # where jobs write, atomically


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


def main(argv: list[str] | None = None, exec_: bool = True) -> int:
    """Run Snakemake under the run lock; ``exec_``: become Snakemake (else wait for it, return its code)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--directory", default=".", help="the working folder of the run (default: here)")
    parser.add_argument("--snakefile", default=str(SNAKEFILE), help="the workflow (default: the project's)")
    parser.add_argument("snakemake_args", nargs=argparse.REMAINDER, help="targets and options for Snakemake, after --")
    args = parser.parse_args(argv)
    workdir = Path(args.directory).resolve()
    snakefile = Path(args.snakefile).resolve()
    rest = args.snakemake_args[1:] if args.snakemake_args[:1] == ["--"] else args.snakemake_args
    try:
        fd = take_run_lock(workdir)
    except LiveRun as error:
        print(f"Not started: {error}", file=sys.stderr)
        return 1
    removed = remove_stale_temporaries(workdir / folder for folder in OUTPUT_FOLDERS)
    if removed:
        print(f"Removed {len(removed)} partial file(s) of writes cut short by a killed run", flush=True)
    if stale_locks(workdir):
        print(f"Clearing the Snakemake lock left by a run that no longer exists in {workdir}", flush=True)
        subprocess.run(snakemake_command(workdir, *rest, "--unlock", snakefile=snakefile), check=True, pass_fds=(fd,))
    run = snakemake_command(workdir, "--rerun-incomplete", *rest, snakefile=snakefile)
    if not exec_:
        return subprocess.run(run, pass_fds=(fd,)).returncode
    # exec: Snakemake becomes this process and keeps the lock, as do the jobs it starts.
    os.execv(snakemake_executable(), run)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
