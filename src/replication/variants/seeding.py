"""A new tree seeded from an existing one (``seed_tree``): its files and Snakemake's metadata
records are copied, so Snakemake's own rerun triggers (every rule passes its settings as params)
rerun exactly the jobs whose settings changed and what depends on them; the base tree is only read.
"""

from __future__ import annotations

import json
import os
import shutil
from base64 import urlsafe_b64decode, urlsafe_b64encode
from pathlib import Path

from .records import RECORD

# What a seeded tree copies from its base: outputs, logs and benchmarks (Snakemake counts a missing
# benchmark file as a missing output). Never figures/reference (committed) or figures/diff.
SEEDED = ("results", "figures", "logs", "benchmarks")
NOT_SEEDED = ("figures/reference", "figures/diff")
# The base's record is not the new tree's: the new tree's build writes its own.


def _metadata_id(path: Path) -> str:
    return urlsafe_b64decode("".join(part.lstrip("@") for part in path.parts).encode()).decode()


def _metadata_path(folder: Path, record_id: str) -> Path:
    encoded = urlsafe_b64encode(record_id.encode()).decode()
    parts = [encoded[i : i + 254] for i in range(0, len(encoded), 254)]
    return folder.joinpath(*(["@" + part for part in parts[:-1]] + parts[-1:]))


def seed_tree(base: str | os.PathLike, dest: str | os.PathLike, prefix: str = "") -> int:
    """Copy the outputs, logs and benchmarks of tree ``base`` into ``dest``, and Snakemake's
    metadata records of them into the Snakemake folder that will build ``dest``: ``dest/.snakemake``,
    or with ``prefix`` (a sweep: one Snakemake run in ``dest``'s parent, the tree's paths prefixed)
    the parent's, with every path in a record prefixed. Times are kept (Snakemake compares them);
    ``base`` is only read. Returns the number of files copied."""
    base, dest = Path(base), Path(dest)
    copied = 0
    for folder in SEEDED:
        for source in sorted((base / folder).rglob("*")) if (base / folder).is_dir() else []:
            relative = source.relative_to(base)
            skipped = relative == RECORD or any(relative.as_posix().startswith(skip + "/") for skip in NOT_SEEDED)
            if not source.is_file() or skipped:
                continue
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
            copied += 1
    metadata = base / ".snakemake" / "metadata"
    target_metadata = (dest.parent if prefix else dest) / ".snakemake" / "metadata"
    for source in sorted(metadata.rglob("*")) if metadata.is_dir() else []:
        if not source.is_file() or source.name.startswith("@"):
            continue
        record_id = _metadata_id(source.relative_to(metadata))
        if Path(record_id).is_absolute() or any(record_id.startswith(skip) for skip in NOT_SEEDED):
            continue
        record = json.loads(source.read_text())
        if prefix:
            for field in ("input", "log"):
                record[field] = [p if os.path.isabs(p) else prefix + p for p in record.get(field) or []]
        target = _metadata_path(target_metadata, prefix + record_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(record))
        shutil.copystat(source, target)
    return copied
