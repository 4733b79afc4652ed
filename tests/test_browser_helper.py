"""The headless-Chromium checker (tests/browser.py) can fail: it sees a broken image, a console error, an uncaught
exception, a click, a page that never finishes; and it leaves no browser process behind. Without Chromium these
tests skip, except under CI, where they fail: CI installs Chromium, so its absence there is a bug."""

from __future__ import annotations

import contextlib
import struct
import time
import zlib
from pathlib import Path

import pytest
from browser import (
    BrowserTimeout,
    check_page,
    leftover_browser_processes,
    open_page,
    page_script,
    require_browser,
)

WIDTH, HEIGHT = 400, 300  # a small viewport keeps each check cheap


@pytest.fixture(autouse=True)
def browser_here():
    require_browser()
    yield
    assert leftover_browser_processes() == [], "a browser or driver process outlived its check"


def write_png(path: Path, width: int = 4, height: int = 3, rgb: tuple[int, int, int] = (200, 30, 30)) -> Path:
    """A valid truecolour PNG of one colour: signature, IHDR, one IDAT, IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))  # filter byte 0 before each row
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
                     + chunk(b"IEND", b""))
    return path


def write_page(folder: Path, body: str, title: str = "t") -> Path:
    page = folder / "page.html"
    page.write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
                    f"<body>{body}</body></html>", encoding="utf-8")
    return page


def test_clean_page(tmp_path: Path):
    write_png(tmp_path / "dot.png")
    page = write_page(tmp_path, "<h1>Report</h1><img src='dot.png' width='40'><p id='s'>waiting</p>"
                      "<script>document.getElementById('s').textContent = 'script ran';</script>", title="Clean")
    shot = tmp_path / "shot.png"
    result = check_page(page, shot, width=WIDTH, height=HEIGHT, timeout=60)
    assert result.console_errors == []
    assert (result.images_total, result.images_broken) == (1, [])
    assert result.title == "Clean"
    assert "Report" in result.text and "script ran" in result.text
    assert result.screenshot == shot and shot.stat().st_size > 0
    assert result.screenshot_size == (WIDTH, HEIGHT)
    assert result.url == page.resolve().as_uri()


def test_full_page_screenshot_is_page_sized(tmp_path: Path):
    page = write_page(tmp_path, "<style>body{margin:0}</style><div style='height:1200px;background:#ddd'>tall</div>")
    result = check_page(page, tmp_path / "shot.png", width=WIDTH, height=HEIGHT, full_page=True)
    assert result.screenshot_size == (WIDTH, 1200)


def test_broken_images_are_named(tmp_path: Path):
    write_png(tmp_path / "dot.png")
    # A lazy image below the fold is checked too; a remote one fails at once (no network, no hang).
    page = write_page(tmp_path, "<img src='dot.png'><img src='missing.png'><div style='height:3000px'></div>"
                      "<img src='also-missing.png' loading='lazy'><img src='https://example.com/x.png'>")
    result = check_page(page, tmp_path / "shot.png", width=WIDTH, height=HEIGHT, timeout=60)
    assert result.images_total == 4
    assert result.images_broken == ["missing.png", "also-missing.png", "https://example.com/x.png"]
    assert any("missing.png" in error for error in result.console_errors)


@pytest.mark.parametrize("script, expected", [
    ("console.error('boom')", "boom"),
    ("throw new Error('kaboom')", "kaboom"),
    ("setTimeout(() => { throw new TypeError('late') }, 0)", "late"),
])
def test_console_errors_are_caught(tmp_path: Path, script: str, expected: str):
    page = write_page(tmp_path, f"<p>x</p><script>{script}</script>")
    result = check_page(page, tmp_path / "shot.png", width=WIDTH, height=HEIGHT, timeout=60)
    assert result.console_errors and any(expected in error for error in result.console_errors), result.console_errors


CLICK_PAGE = ("<button onclick=\"document.getElementById('out').textContent = 'clicked'\">go</button>"
              "<span id='out'>idle</span>")


def test_click_is_seen(tmp_path: Path):
    page = write_page(tmp_path, CLICK_PAGE)
    with open_page(page, width=WIDTH, height=HEIGHT, timeout=60) as live:
        assert live.text("#out") == "idle"
        live.click("button")
        assert live.text("#out") == "clicked"
        assert live.evaluate("document.getElementById('out').textContent") == "clicked"
        assert live.console_errors == []
    script = "() => { document.querySelector('button').click(); return document.getElementById('out').textContent; }"
    assert page_script(page, script, width=WIDTH, height=HEIGHT) == "clicked"


@pytest.mark.parametrize("how", ["script never returns", "page never loads"])
def test_timeout_kills_the_browser(tmp_path: Path, how: str):
    with pytest.raises(BrowserTimeout):
        if how == "script never returns":
            page_script(write_page(tmp_path, "<p>x</p>"), "while (true) {}", width=WIDTH, height=HEIGHT, timeout=4)
        else:
            page = write_page(tmp_path, "<p>x</p><script>while (true) {}</script>")
            check_page(page, tmp_path / "shot.png", width=WIDTH, height=HEIGHT, timeout=4)
    # Killed, not left behind: no browser process of this test process survives the timeout.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _browser_children():
        time.sleep(0.2)
    assert _browser_children() == []


def _browser_children() -> list[str]:
    import psutil

    found = []
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "chrom" in child.name().lower() and child.status() != psutil.STATUS_ZOMBIE:
                found.append(f"{child.pid} {child.name()}")
    return found
