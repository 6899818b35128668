"""Make docs/service-calculator.png: the web calculator after a verification, in headless Chromium.

Starts ``planner serve`` on a free loopback port with a throw-away database, opens a
permalink, clicks "Verify this plan", waits for the verdict and saves the whole page.
Uses Debian's ``/usr/bin/chromium`` through playwright (no browser download).

Run: python docs/make_screenshot.py [OUTPUT.png]
"""

from __future__ import annotations

import http.client
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

PERMALINK = "/?setting=shuffle-private&k=1000&alpha=0.1&eps1=1&eps2=0.25&delta=1e-6"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/v1/health")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the server did not start within 60 s")


def main() -> None:
    output = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/service-calculator.png")
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        database = str(Path(folder) / "jobs.sqlite3")
        server = subprocess.Popen(
            [sys.executable, "-m", "planner", "serve", "--port", str(port), "--db", database]
        )
        try:
            wait_until_up(port)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch_persistent_context(
                    str(Path(folder) / "profile"),
                    executable_path="/usr/bin/chromium",
                    headless=True,
                    args=CHROMIUM_ARGS,
                    viewport={"width": 960, "height": 900},
                )
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:{port}{PERMALINK}")
                page.get_by_role("button", name="Verify this plan").click()
                page.wait_for_selector("#verdict", timeout=300_000)
                page.screenshot(path=str(output), full_page=True)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=15)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
