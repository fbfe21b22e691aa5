"""MkDocs hooks (``mkdocs.yml``: ``hooks``): what the documentation shows of the committed reference
sets is generated when it is built, never copied into ``docs/`` (``replication.gallery``).

- ``gallery.md``, a page of every registered figure, and the reference PNGs it and the pages show,
  served under ``gallery/<set>/<paper>/<figure>.png`` straight from ``figures/reference/``;
- a line ``<!-- claims report: <set> <level> -->`` in a page becomes that set's claims report, its
  headings from ``<level>``.
"""

from __future__ import annotations

import re

from mkdocs.structure.files import File

from replication import gallery

# The page that shows each reference set's claims report (the gallery links its figures' claims there).
REPORT_PAGES = {"config": "claims.md", "phase": "phase-diagram.md", "plateau": "plateau.md"}
CLAIMS_REPORT = re.compile(r"^<!-- claims report: (\w+) ([1-6]) -->$", flags=re.M)


def on_files(files, config):
    files.append(File.generated(config, "gallery.md", content=gallery.gallery_markdown(REPORT_PAGES)))
    for item in gallery.gallery_figures():
        if item.png.is_file():
            files.append(File.generated(config, item.site_path, abs_src_path=str(item.png)))
    return files


def on_page_markdown(markdown, page, config, files):
    return CLAIMS_REPORT.sub(
        lambda match: gallery.reference_claims_markdown(match.group(1), int(match.group(2))), markdown
    )
