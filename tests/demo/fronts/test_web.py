"""`apc demo --web` in a real headless browser: Debian's chromium driven through Playwright.

The page draws the console into a canvas, so the test reads what the page shows from the page's own
terminal buffer (xterm.js), found through a property hook installed before the page's script runs.
Outside CI a machine without chromium skips with the command that installs it; CI (`CI` set) installs
it in `.ci/run` and this test fails if it is missing. A screenshot is saved whatever the outcome.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
INSTALL = "apt-get update && apt-get install -y chromium chromium-driver"
START_SECONDS = 60.0
WAIT_MS = 30_000
READY_LINE = re.compile(r"open (http://127\.0\.0\.1:\d+) in a browser .*data in (\S+)\);")

# Installed before the page's script: the first object given a `terminal` that has a buffer is the
# console's xterm.js terminal; the test reads its visible lines.
HOOK = """
Object.defineProperty(Object.prototype, "terminal", {
  configurable: true,
  get() { return undefined; },
  set(value) {
    Object.defineProperty(this, "terminal", {value, writable: true, configurable: true, enumerable: true});
    if (value && value.buffer) { window.__apcTerminal = value; }
  },
});
"""
SCREEN = """() => {
  const t = window.__apcTerminal;
  if (!t) { return ""; }
  const buffer = t.buffer.active;
  const lines = [];
  for (let i = 0; i < t.rows; i++) {
    const line = buffer.getLine(buffer.viewportY + i);
    lines.push(line ? line.translateToString(true) : "");
  }
  return lines.join("\\n");
}"""


def _wait_for(page: Page, pattern: str) -> None:
    """Until a line of the page's terminal matches `pattern` (a regular expression)."""
    page.wait_for_function(
        f"(pattern) => new RegExp(pattern, 'm').test(({SCREEN})())", arg=pattern, timeout=WAIT_MS
    )


def _chromium_or_skip() -> None:
    if CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing: install it with `{INSTALL}`"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (.ci/run does this before `make test`)")
    pytest.skip(f"{message} (CI installs it and runs this test)")


@pytest.fixture
def web_demo() -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    """`apc demo --web --port 0` running: the process, the page URL and its temporary data folder."""
    with subprocess.Popen(
        [sys.executable, "-m", "demo", "--web", "--port", "0", "--speed", "90"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            found = READY_LINE.search(line)
            assert found is not None, f"no start-up line: {line!r}; stderr: {_stderr(process)}"
            yield process, found.group(1), Path(found.group(2))
        finally:
            if process.poll() is None:
                process.kill()


def _stderr(process: subprocess.Popen[str]) -> str:
    if process.poll() is None:
        process.kill()
    return process.communicate(timeout=10)[1]


def test_the_live_demo_runs_in_a_browser_tab(
    web_demo: tuple[subprocess.Popen[str], str, Path],
    tmp_path: Path,
    record_property: Callable[[str, object], None],
) -> None:
    _chromium_or_skip()
    process, url, data_dir = web_demo
    screenshot = tmp_path / "apc-demo-web.png"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch_persistent_context(
            tmp_path / "chromium-profile",
            executable_path=CHROMIUM,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 800},
        )
        page: Page = browser.new_page()
        # The page asks for a web font; this machine has no outside network, and a test needs none.
        page.route(
            "**/*", lambda route: route.continue_() if route.request.url.startswith(url) else route.abort()
        )
        page.add_init_script(HOOK)
        try:
            page.goto(url)
            _wait_for(page, r"Kind +Process +Run +Step")
            _wait_for(page, r" r_[0-9a-f]+… ")
            _wait_for(
                page,
                r"^ operator@example\.com \(person, operator\) · demo · http://127\.0\.0\.1:\d+/mcp · work ",
            )
            page.click("#terminal")
            page.keyboard.press("o")
            _wait_for(page, r"^ run r_[0-9a-f]+ · [a-z-]+ v1 · ")
            assert re.search(r"^ Steps +Timeline +Evidence +Map +Body +Inputs", page.evaluate(SCREEN), re.M)
        finally:
            page.screenshot(path=str(screenshot))
            browser.close()
            record_property("screenshot", str(screenshot))
            print(f"screenshot: {screenshot}")
    assert screenshot.stat().st_size > 10_000

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0, _stderr(process)
    assert not data_dir.exists(), "the demo server did not remove its temporary data folder"
    port = int(url.rsplit(":", 1)[1])
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0, "the page is still served after the stop"


def test_a_taken_port_is_a_one_line_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "demo", "--web", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"apc demo: error: cannot listen on 127.0.0.1:{port}: Address already in use; "
        "choose another with --port N, or --port 0 for any free port\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--host", "0.0.0.0"], "--host is for --web"),
        (["--web", "--headless"], "--web shows the live demo; it takes neither --headless nor --runs"),
        (["--web", "--runs", "3"], "--web shows the live demo; it takes neither --headless nor --runs"),
    ],
)
def test_web_options_are_checked(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from demo.cli import main

    assert main(argv) == 2
    assert capsys.readouterr().err == f"apc demo: error: {message}\n"
