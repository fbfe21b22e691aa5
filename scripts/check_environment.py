"""The running Python's installed distributions are exactly the lock file's: every locked version,
nothing else but this project itself (`make env` runs this after installing).

    python scripts/check_environment.py [requirements/lock.txt]
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
PROJECT = "replication"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(lock: Path) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line of a pip-compile lock file."""
    return {canonical(m[1]): m[2] for line in lock.read_text().splitlines() if (m := PIN.match(line))}


def installed() -> dict[str, str]:
    return {canonical(dist.metadata["Name"]): dist.version for dist in metadata.distributions()}


def differences(lock: dict[str, str], present: dict[str, str]) -> list[str]:
    problems = [
        f"{name}: locked {version}, installed {present.get(name, 'nothing')}"
        for name, version in sorted(lock.items())
        if present.get(name) != version
    ]
    problems += [
        f"{name}: installed {version}, not in the lock"
        for name, version in sorted(present.items())
        if name not in lock and name != PROJECT
    ]
    return problems


def main(argv: list[str]) -> int:
    lock = Path(argv[0] if argv else Path(__file__).resolve().parents[1] / "requirements" / "lock.txt")
    problems = differences(locked(lock), installed())
    for problem in problems:
        print(f"environment differs from {lock}: {problem}", file=sys.stderr)
    if not problems:
        print(f"environment: the {len(locked(lock))} versions of {lock}, exactly")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
