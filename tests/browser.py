"""Headless-Chromium page checker for the tests: open a local HTML file and report what a person would see.

``check_page`` loads a file as a ``file://`` URL and returns a :class:`PageCheck`: the title, every console error,
uncaught exception and failed request, which ``<img>`` elements did not load, the body text, and a screenshot whose
pixel size is read back from the PNG. ``open_page`` keeps the page open to click and evaluate JavaScript;
``page_script`` is the one-shot form of it.

Mechanism: the ``playwright`` package from PyPI driving the system browser (Debian's ``chromium``) through
``executable_path``. Its wheel bundles the node driver, so nothing is downloaded at run time (``playwright install``
is never needed or called), and it already solves the parts a hand-written DevTools client would have to: console,
page-error and failed-request events, waiting for the load event, screenshots, clicks with auto-waiting.

What it does not do by itself, and this module adds:
- a hard deadline: ``page.evaluate`` has no timeout of its own and a page can spin forever, so a watchdog thread
  SIGKILLs the browser at ``timeout`` seconds and the call raises :class:`BrowserTimeout`;
- no leftover processes: every browser gets a fresh ``--user-data-dir`` in a temporary folder named after this
  Python process, and after each use any live process still carrying that folder on its command line is killed
  and waited for (``leftover_browser_processes`` lets a test check it);
- no network: besides the background-networking flags, every host name resolves to nothing, so a page that is not
  self-contained shows its remote fetches as failed requests at once instead of hanging until the timeout.

Linux only (processes are found through /proc), like the machines the suite runs on.
"""

from __future__ import annotations

import os
import shutil
import signal
import struct
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BROWSER_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    # The network is closed: fail every host name lookup at once rather than wait on it.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
)
# A profile folder name that says which Python process owns the browser, so cleanup never touches another's.
PROFILE_PREFIX = f"lurch-chromium-{os.getpid()}-"
MAX_SRC = 200  # data: URIs are long; a broken one is named by its start

# Waits for every <img>, lazy ones included (below the fold they would never load), then reports each one.
_IMAGES_JS = """async () => {
  const imgs = [...document.images];
  for (const img of imgs) img.loading = "eager";
  await Promise.all(imgs.map(img => img.complete ? null : new Promise(done => {
    img.addEventListener("load", done, {once: true});
    img.addEventListener("error", done, {once: true});
  })));
  // One frame and one task more, so errors thrown by onload handlers or timers of 0 ms are seen too.
  await new Promise(done => requestAnimationFrame(() => setTimeout(done, 0)));
  return imgs.map(img => ({src: img.getAttribute("src") ?? "", ok: img.complete && img.naturalWidth > 0}));
}"""


class BrowserTimeout(TimeoutError):
    """The page, or a script on it, did not finish within the timeout; the browser has been killed."""


@dataclass(frozen=True)
class PageCheck:
    title: str
    console_errors: list[str]  # console.error messages, uncaught exceptions, failed requests
    images_total: int
    images_broken: list[str]  # the src attribute of each <img> that did not load
    screenshot: Path
    screenshot_size: tuple[int, int]  # (width, height) in pixels, from the PNG header
    text: str  # document.body.innerText
    url: str  # the file:// URL that was loaded


def chromium_available() -> str | None:
    """The Chromium executable to use, or None. ``LURCH_CHROMIUM`` overrides the search."""
    for candidate in (os.environ.get("LURCH_CHROMIUM"), shutil.which("chromium"), "/usr/bin/chromium"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def browser_unavailable_reason() -> str | None:
    """Why pages cannot be checked here (None if they can), worded for a test failure."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the Python package 'playwright' is not installed (it is in the 'dev' extra)"
    if chromium_available() is None:
        return "Chromium is not installed: apt-get install -y chromium (.ci/run does this)"
    return None


def require_browser() -> None:
    """In a test: skip when no headless browser is installed, but fail under CI (``CI`` set), where one must be."""
    import pytest

    reason = browser_unavailable_reason()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"no headless browser under CI: {reason}", pytrace=False)
        pytest.skip(reason)


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, which the format requires to come first."""
    head = Path(path).read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise ValueError(f"{path} is not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _live_processes() -> Iterator[tuple[int, int, str]]:
    """(pid, parent pid, command line) of every process that is not a zombie."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        except OSError:  # the process ended while we looked
            continue
        if state not in ("Z", "X"):
            yield int(entry.name), int(ppid), cmdline


def _processes_with(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker``."""
    return [pid for pid, _, cmdline in _live_processes() if marker in cmdline and pid != os.getpid()]


def leftover_browser_processes() -> list[int]:
    """Browser processes and Playwright drivers started by this Python process that are still alive: between
    checks there should be none."""
    profiles = os.path.join(tempfile.gettempdir(), PROFILE_PREFIX)
    return [pid for pid, ppid, cmdline in _live_processes()
            if profiles in cmdline or (ppid == os.getpid() and "playwright" in cmdline and "run-driver" in cmdline)]


def _kill_browser(profile: str, wait: float = 10.0) -> None:
    """SIGKILL every process of the browser that uses ``profile``, and wait until they are gone."""
    deadline = time.monotonic() + wait
    while pids := _processes_with(profile):
        for pid in pids:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            raise RuntimeError(f"browser processes {pids} survived SIGKILL")
        time.sleep(0.05)


class _Watchdog:
    """Kills the browser when the deadline passes, which unblocks any pending Playwright call."""

    def __init__(self, timeout: float, profile: str) -> None:
        self.fired = threading.Event()
        self._timer = threading.Timer(timeout, self._fire, args=(profile,))
        self._timer.daemon = True

    def _fire(self, profile: str) -> None:
        self.fired.set()
        with suppress(Exception):  # a failure here must not hide the timeout; the final sweep retries
            _kill_browser(profile)

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()


class LivePage:
    """An open page: evaluate JavaScript, click, read text. ``page`` is the Playwright Page for anything else."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.console_errors: list[str] = []
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self.console_errors.append(f"pageerror: {error.name}: {error.message}"))
        page.on("requestfailed", lambda req: self.console_errors.append(f"requestfailed: {req.url} ({req.failure})"))
        page.on("crash", lambda _page: self.console_errors.append("crash: the page crashed"))

    def _on_console(self, message: Any) -> None:
        if message.type == "error":
            self.console_errors.append(f"console: {message.text}")

    def evaluate(self, script: str, arg: Any = None) -> Any:
        """A JS expression or function (``() => ...``); a returned promise is awaited, the value comes back as JSON."""
        return self.page.evaluate(script, arg)

    def click(self, selector: str) -> None:
        self.page.click(selector)

    def text(self, selector: str = "body") -> str:
        return self.page.inner_text(selector)


@contextmanager
def open_page(html_path: Path, *, width: int = 1280, height: int = 2000, timeout: float = 60) -> Iterator[LivePage]:
    """Load ``html_path`` (waiting for its load event) in a fresh headless Chromium; the browser is killed after.

    Everything inside the block counts towards ``timeout`` seconds; past it the browser is killed and
    :class:`BrowserTimeout` is raised.
    """
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    executable = chromium_available()
    if executable is None:
        raise RuntimeError(browser_unavailable_reason())
    url = Path(html_path).resolve().as_uri()
    with tempfile.TemporaryDirectory(prefix=PROFILE_PREFIX, ignore_cleanup_errors=True) as profile:
        try:
            with _Watchdog(timeout, profile) as watchdog:
                try:
                    with sync_playwright() as playwright:
                        context = playwright.chromium.launch_persistent_context(
                            profile, executable_path=executable, headless=True, args=list(BROWSER_FLAGS),
                            viewport={"width": width, "height": height}, timeout=timeout * 1000)
                        try:
                            context.set_default_timeout(timeout * 1000)
                            page = context.pages[0] if context.pages else context.new_page()
                            live = LivePage(page)
                            page.goto(url, wait_until="load")
                            yield live
                        finally:
                            with suppress(PlaywrightError):  # already gone when the watchdog fired
                                context.close()
                except (PlaywrightTimeout, PlaywrightError) as error:
                    if watchdog.fired.is_set() or isinstance(error, PlaywrightTimeout):
                        raise BrowserTimeout(f"{html_path}: not done within {timeout} s; browser killed") from error
                    raise
        finally:
            _kill_browser(profile)  # normally nothing is left; this makes sure of it


def check_page(html_path: Path, screenshot: Path, *, width: int = 1280, height: int = 2000, timeout: float = 60,
               full_page: bool = False) -> PageCheck:
    """Load the page, wait for every image, take a screenshot (the viewport, or the whole page) and report."""
    screenshot = Path(screenshot)
    with open_page(html_path, width=width, height=height, timeout=timeout) as live:
        images = live.evaluate(_IMAGES_JS)
        live.page.screenshot(path=str(screenshot), full_page=full_page)
        title = live.page.title()
        text = live.evaluate("document.body ? document.body.innerText : ''")
        errors = list(live.console_errors)
        url = live.page.url
    return PageCheck(
        title=title,
        console_errors=errors,
        images_total=len(images),
        images_broken=[image["src"][:MAX_SRC] for image in images if not image["ok"]],
        screenshot=screenshot,
        screenshot_size=png_size(screenshot),
        text=text,
        url=url,
    )


def page_script(html_path: Path, script: str, *, width: int = 1280, height: int = 2000, timeout: float = 60) -> Any:
    """Load the page and return what ``script`` evaluates to (see :meth:`LivePage.evaluate`)."""
    with open_page(html_path, width=width, height=height, timeout=timeout) as live:
        return live.evaluate(script)
