"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages ending in a NUL byte, Chromium reading file descriptor 3 and writing 4), so a test
needs no WebDriver, no websocket client and no network port for the browser.

``Chromium.find()`` is the browser binary (Debian's ``chromium``), or None.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

BINARIES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# Headless, and nothing that reaches the network or depends on the machine's profile.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)
# The page's state once every image has loaded or failed: the load event has fired.
LOADED = "new Promise(done => document.readyState === 'complete' ? done() : addEventListener('load', () => done()))"


class Chromium:
    """One browser with one page (``open``, ``evaluate``, ``screenshot``); ``states`` loads many pages
    in tabs of their own."""

    def __init__(self, binary: str, width: int = 1280, height: int = 900, timeout_s: float = 30.0):
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-")
        self.timeout_s = timeout_s
        to_browser, self._writer = os.pipe()
        self._reader, from_browser = os.pipe()

        def descriptors_3_and_4():  # in the child, before exec: the pipe ends where Chromium expects them
            reading, writing = os.dup(to_browser), os.dup(from_browser)
            os.dup2(reading, 3)
            os.dup2(writing, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.process = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
            preexec_fn=descriptors_3_and_4,
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer, self._id = b"", 0
        page = next(t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
        self.send("Page.enable", session=True)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=True,
        )

    @staticmethod
    def find() -> str | None:
        return next((path for path in map(shutil.which, BINARIES) if path), None)

    def send(self, method: str, params: dict | None = None, session: bool | str = False) -> dict:
        """One command to the browser, to the page (``session=True``) or to the tab of a session id;
        its result (events in between are dropped)."""
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session if session is True else session
        os.write(self._writer, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            while b"\0" not in self._buffer:
                readable, _, _ = select.select([self._reader], [], [], max(0.0, deadline - time.monotonic()))
                if not readable:
                    raise TimeoutError(f"Chromium did not answer {method} in {self.timeout_s} s")
                chunk = os.read(self._reader, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"Chromium closed the pipe during {method}")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, expression: str, session: bool | str = True):
        """The value of a JavaScript expression on the page (a promise is awaited)."""
        result = self.send(
            "Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, session=session
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"JavaScript failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str) -> None:
        """Load ``url`` and wait for its load event (every image loaded or failed)."""
        navigation = self.send("Page.navigate", {"url": url}, session=True)
        if navigation.get("errorText"):
            raise RuntimeError(f"{url}: {navigation['errorText']}")
        deadline = time.monotonic() + self.timeout_s
        while self.evaluate("location.href") != url and time.monotonic() < deadline:
            time.sleep(0.02)  # the old document answers until the new one commits
        self.evaluate(LOADED)

    def states(self, urls: list[str], expression: str, tabs: int = 4) -> dict[str, object]:
        """``expression``'s value on each page of ``urls`` once loaded, ``tabs`` pages loading at a time."""
        found = {}
        for start in range(0, len(urls), tabs):
            opened = {}
            for url in urls[start : start + tabs]:
                target = self.send("Target.createTarget", {"url": url})["targetId"]
                opened[url] = (
                    target,
                    self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"],
                )
            for url, (target, session) in opened.items():
                deadline = time.monotonic() + self.timeout_s
                while self.evaluate("location.href", session) != url and time.monotonic() < deadline:
                    time.sleep(0.02)
                self.evaluate(LOADED, session)
                found[url] = self.evaluate(expression, session)
                self.send("Target.closeTarget", {"targetId": target})
        return found

    def screenshot(self, target: Path, height: int | None = None) -> Path:
        """A PNG of the page from its top: the window, or ``height`` pixels of the page."""
        params = {"format": "png"}
        if height:
            width = self.evaluate("document.documentElement.clientWidth")
            params |= {
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
            }
        target.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", params, session=True)["data"]))
        return target

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, OSError, TimeoutError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._writer)
        os.close(self._reader)
        shutil.rmtree(self.profile, ignore_errors=True)
