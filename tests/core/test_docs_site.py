"""The built documentation (``mkdocs build --strict``, as ``make docs``) in a real browser: every page
loads, and loads nothing from another host, every image decodes and is shown, no internal link or
anchor is broken, no page is wider than the window, the gallery shows every registered figure, the
claims reports are rendered; a screenshot of the gallery is saved.

Chromium (Debian: ``apt-get install -y chromium``) runs headless (``headless_chromium``). Without a
binary the browser tests skip, except where ``REPLICATION_BROWSER_TEST=1``: CI (``.ci/run``) installs
Chromium and sets it, so there a missing browser fails.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import os
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

from headless_chromium import Chromium
from replication.gallery import gallery_figures

# Building the site takes tens of seconds: kept out of mutation runs (the gallery's own tests stand in).
pytestmark = pytest.mark.heavy

REQUIRED = os.environ.get("REPLICATION_BROWSER_TEST") == "1"
# A white pixel.
PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/x8AAwMCAO+ip1sAAAAASUVORK5CYII="
)
# What the page reports once loaded: its HTTP status, its images, links and anchors, and its width.
PAGE_STATE = """(() => {
  const shown = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0
      && getComputedStyle(e).visibility !== 'hidden'; };
  const navigation = performance.getEntriesByType('navigation')[0];
  return {
    status: navigation ? navigation.responseStatus : 0,
    images: [...document.images].map(i => ({src: i.currentSrc || i.src, complete: i.complete,
                                           width: i.naturalWidth, shown: shown(i)})),
    links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    requests: performance.getEntriesByType('resource').map(r => r.name),
    ids: [...document.querySelectorAll('[id], a[name]')].map(e => e.id || e.getAttribute('name')),
    wider: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    text: document.body.innerText,
  };
})()"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serving(folder: Path):
    """``folder`` on a local HTTP server (as a reader's browser gets a site); its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def served(docs_site):
    with serving(docs_site) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    binary = Chromium.find()
    if binary is None:
        if REQUIRED:
            pytest.fail("REPLICATION_BROWSER_TEST=1 and no Chromium on PATH: apt-get install -y chromium")
        pytest.skip("no Chromium on PATH (Debian: apt-get install -y chromium); CI installs it and requires it")
    chromium = Chromium(binary)
    yield chromium
    chromium.close()


@pytest.fixture(scope="module")
def pages(docs_site, served, browser) -> dict[str, dict]:
    """Every page of the site (each ``index.html``), loaded in the browser: URL -> its state."""
    folders = [path.parent for path in docs_site.rglob("index.html")]
    urls = sorted(
        served + folder.relative_to(docs_site).as_posix().removeprefix(".") + ("/" if folder != docs_site else "")
        for folder in folders
    )
    started = time.monotonic()
    states = browser.states(urls, PAGE_STATE)
    print(f"{len(urls)} pages loaded in {time.monotonic() - started:.1f} s of browser time")
    return states


def test_every_page_loads(pages, served):
    assert len(pages) >= 20 and served + "gallery/" in pages
    assert {url: state["status"] for url, state in pages.items() if state["status"] != 200} == {}


def test_pages_load_nothing_from_another_host(pages, served):
    outside = {url: [r for r in state["requests"] if not r.startswith(served)] for url, state in pages.items()}
    assert {url: requests for url, requests in outside.items() if requests} == {}


def broken_images(pages: dict[str, dict]) -> list[str]:
    """``page: image`` for each image that did not load, does not decode or is not shown."""
    return [
        f"{url}: {image['src']}"
        for url, state in pages.items()
        for image in state["images"]
        if not (image["complete"] and image["width"] > 0 and image["shown"])
    ]


def broken_links(pages: dict[str, dict], served: str, site: Path) -> list[str]:
    """``page: link`` for each link inside the site that leads to no page or file of it, or to a
    page without the anchor it names."""
    ids = {url: set(state["ids"]) for url, state in pages.items()}
    broken = []
    for url, state in pages.items():
        for link in state["links"]:
            target, anchor = urldefrag(link)
            if not target.startswith(served):
                continue
            if target in ids:
                if anchor and unquote(anchor) not in ids[target]:
                    broken.append(f"{url}: {link} (no anchor {anchor})")
            elif not (site / unquote(urlparse(target).path).lstrip("/")).is_file():
                broken.append(f"{url}: {link}")
    return broken


def test_every_image_decodes_and_is_shown(pages):
    assert broken_images(pages) == []


def test_no_internal_link_is_broken(pages, served, docs_site):
    assert broken_links(pages, served, docs_site) == []


def test_the_checks_see_broken_images_and_links(browser, tmp_path):
    """On a page made broken on purpose: an image that is missing, one that does not decode, one not
    shown, a link to no page, a link to a missing anchor, a page wider than the window."""
    (tmp_path / "good.png").write_bytes(PNG_1x1)
    (tmp_path / "bad.png").write_bytes(b"not a png")
    (tmp_path / "index.html").write_text(
        "<html><body><h1 id='top'>t</h1><img src='good.png'><img src='gone.png'><img src='bad.png'>"
        "<img src='good.png' style='display:none'><a href='#top'>ok</a><a href='#nowhere'>x</a>"
        "<a href='gone/'>y</a><a href='good.png'>z</a><div style='width:5000px'>wide</div></body></html>"
    )
    with serving(tmp_path) as url:
        pages = browser.states([url], PAGE_STATE)
    assert broken_images(pages) == [f"{url}: {url}{name}" for name in ("gone.png", "bad.png", "good.png")]
    assert broken_links(pages, url, tmp_path) == [f"{url}: {url}#nowhere (no anchor nowhere)", f"{url}: {url}gone/"]
    assert pages[url]["wider"] > 0


def test_no_page_is_wider_than_the_window(pages):
    assert {url: state["wider"] for url, state in pages.items() if state["wider"] > 0} == {}


def test_gallery_shows_every_registered_figure(pages, served, browser, tmp_path):
    """One decoded image per registered figure, each with its rebuild command; a screenshot of the
    gallery's first screens for a person to look at."""
    gallery = pages[served + "gallery/"]
    shown = {image["src"].removeprefix(served + "gallery/") for image in gallery["images"] if image["width"] > 0}
    wanted = {item.site_path.removeprefix("gallery/") for item in gallery_figures()}
    assert wanted - shown == set()
    assert gallery["text"].count("Rebuild: ") == len(gallery_figures())
    browser.open(served + "gallery/")
    screenshot = browser.screenshot(tmp_path / "gallery.png", height=2400)
    assert screenshot.stat().st_size > 10_000
    print(f"screenshot of the gallery: {screenshot}")


def test_phase_and_plateau_pages_show_their_figures(pages, served):
    for page, figures in {
        "phase-diagram/": ["phase/local_to_global/phase_heatmaps.png", "phase/local_to_global/phase_plateau.png"],
        "plateau/": ["plateau/local_to_global/plateau_curvature.png", "plateau/local_to_global/plateau_law.png"],
    }.items():
        shown = {image["src"] for image in pages[served + page]["images"] if image["width"] > 0}
        assert {served + "gallery/" + figure for figure in figures} <= shown, page


def test_claims_reports_are_rendered_where_pages_ask(pages, served):
    for page, title in {
        "claims/": "Claims report of figures/reference/smoke",
        "phase-diagram/": "Claims report of figures/reference/phase",
        "plateau/": "Claims report of figures/reference/plateau",
    }.items():
        text = pages[served + page]["text"]
        assert title in text and "Statements and reasons" in text, page
        assert "claims report:" not in text, page  # no marker left unreplaced
    assert "expected at smoke" in pages[served + "claims/"]["text"]
