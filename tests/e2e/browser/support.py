"""What the browser tests of the web app stand on, beside tests/starter/web/conftest.py's server and worker:
Debian's chromium driven by Playwright's sync API, and a TCP proxy between the browser and the app
that can drop every connection (a network that fails mid-research).

The worker of conftest.py runs in the tests' event loop, so a browser must never block it: a
scenario is a plain function of a page, run in a thread (`await in_browser(scenario)`), where
Playwright's sync API has a loop of its own.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.conftest import REPO

T = TypeVar("T")

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        return f"no chromium at {CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    return None


# --- a proxy that can drop every connection ---------------------------------------------------------


@dataclass
class Proxy:
    """Forwards 127.0.0.1:port to the app. `drop()` cuts every open connection at once (the
    browser sees its event stream die, as behind a flaky network or a restarted load balancer)."""

    target: int
    _listener: socket.socket = field(default_factory=lambda: socket.create_server(("127.0.0.1", 0)))
    _connections: set[socket.socket] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def start(self) -> Proxy:
        threading.Thread(target=self._accept, daemon=True, name="proxy").start()
        return self

    def drop(self) -> int:
        with self._lock:
            dropped = list(self._connections)
            self._connections.clear()
        for conn in dropped:
            _close(conn)
        return len(dropped)

    def stop(self) -> None:
        _close(self._listener)
        self.drop()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            with self._lock:
                self._connections |= {client, upstream}
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for conn in (source, sink):
            _close(conn)
            with self._lock:
                self._connections.discard(conn)


def _close(conn: socket.socket) -> None:
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    conn.close()


# --- the browser ---------------------------------------------------------------------------------------


@dataclass
class Seen:
    """What the page did that the test did not ask for: every request it made, its console
    messages, its dialogs (dismissed) and its uncaught errors."""

    requests: list[str] = field(default_factory=list)
    console: list[tuple[str, str]] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def watch(self, page: Any) -> None:
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("console", lambda message: self.console.append((message.type, message.text)))
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def problems(self) -> list[str]:
        return (
            [
                f"console {kind}: {text}"
                for kind, text in self.console
                if kind in ("error", "warning")
            ]
            + [f"dialog: {d}" for d in self.dialogs]
            + [f"page error: {e}" for e in self.errors]
        )


def browse(scenario: Callable[[Any, Seen], T], **context: Any) -> T:
    """SCENARIO(page, seen) in a fresh Chromium, with Playwright's sync API, in this thread (call
    it through `in_browser` from an async test, so the worker's event loop keeps running)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(
                **{"viewport": {"width": 1280, "height": 860}, **context}
            ).new_page()
            page.set_default_timeout(20_000)
            seen = Seen()
            seen.watch(page)
            return scenario(page, seen)
        finally:
            browser.close()


async def in_browser(scenario: Callable[[Any, Seen], T], **context: Any) -> T:
    if reason := browser_missing():
        pytest.skip(reason)
    return await asyncio.to_thread(browse, scenario, **context)


def shoot(page: Any, name: str, folder: Path, **options: Any) -> Path:
    """A screenshot NAME.png in FOLDER, and a small copy in SCREENSHOTS_DIR too when that is set
    (the README's images: `SCREENSHOTS_DIR=docs/screenshots pytest tests/e2e/browser/test_browser.py`)."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), **options)
    if target := os.environ.get("SCREENSHOTS_DIR"):
        kept = Path(REPO, target, f"{name}.png")
        kept.parent.mkdir(parents=True, exist_ok=True)
        small(path, kept)
    return path


def small(source: Path, target: Path) -> None:
    """A screenshot in 128 colours (a third of the bytes; text and UI need no more), when Pillow
    (which reportlab brings) is there; else as it is."""
    try:
        from PIL import Image
    except ImportError:
        shutil.copy(source, target)
        return
    with Image.open(source) as image:
        image.convert("RGB").quantize(
            colors=128, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        ).save(target, optimize=True)
