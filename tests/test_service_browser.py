"""The web calculator in a real browser: headless Chromium (Debian's) driven by playwright.

Opens a permalink on a real ``planner serve``, reads the table and compares it with the
CLI's numbers, changes a field, clicks verify, waits for the verdict and compares it with
``planner validate`` at the same seed; a bad field shows the CLI's line beside it; the
page fits a phone's width. The browser is the system's ``/usr/bin/chromium`` (``.ci/run``
installs it); playwright never downloads one.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from planner.cli import main
from tests.servers import free_port, start_server, stop_server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
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

if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        raise RuntimeError("CI must install Debian's chromium (.ci/run does: apt-get install)")
    pytest.skip(
        "no /usr/bin/chromium here (apt-get install chromium); CI installs it",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")


def cli_json(args: list[str], capsys) -> dict:
    code = main(args)
    captured = capsys.readouterr()
    assert code in (0, 1, 3), captured.err
    return json.loads(captured.out)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    database = tmp_path_factory.mktemp("browser") / "jobs.sqlite3"
    port = free_port()
    process = start_server(port, database)
    yield f"http://127.0.0.1:{port}"
    stop_server(process)


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
        )
        yield context
        context.close()
    shutil.rmtree(profile, ignore_errors=True)


def users(page) -> list[int]:
    cells = page.locator('#plan-table td[data-field="users"]').all_inner_texts()
    return [int(text.replace(",", "")) for text in cells]


def test_permalink_table_change_and_verify(server, browser, capsys) -> None:
    page = browser.new_page()
    query = "setting=central&k=200&alpha=0.2&eps1=1&eps2=0.3"
    page.goto(f"{server}/?{query}")
    flags = ["--model", "central", "-k", "200", "--alpha", "0.2", "--eps1", "1"]
    expected = cli_json(["plan", *flags, "--eps2", "0.3", "--json"], capsys)
    assert users(page) == [group["n_users"] for group in expected["groups"]]
    assert page.locator("svg.plot path").count() >= 2
    assert page.get_by_label("Group 2's ε2").input_value() == "0.3"

    page.get_by_label("Group 2's ε2").fill("0.5")
    page.get_by_role("button", name="Plan", exact=True).click()
    page.wait_for_url("**eps2=0.5**")
    expected = cli_json(["plan", *flags, "--eps2", "0.5", "--json"], capsys)
    assert users(page) == [group["n_users"] for group in expected["groups"]]
    permalink = page.locator("#permalink").get_attribute("href")
    assert permalink is not None and "eps2=0.5" in permalink

    page.locator("#trials").fill("200")
    page.locator("#seed").fill("5")
    page.get_by_role("button", name="Verify this plan").click()
    page.wait_for_selector("#verdict", timeout=120_000)
    assert page.locator("#verify-progress").get_attribute("value") == "1"
    shown = page.locator("#verdict").inner_text()
    report = cli_json(
        ["validate", *flags, "--eps2", "0.5", "--trials", "200", "--seed", "5", "--json"], capsys
    )
    verdict = report.get("verdict", "pass" if report["passed"] else "fail")
    assert shown == f"verdict: {verdict.upper()}"
    rows = page.locator("#verify-result tbody tr").count()
    assert rows == len(report["families"])
    page.close()


def test_a_bad_field_shows_the_cli_line_beside_it(server, browser, capsys) -> None:
    page = browser.new_page()
    page.goto(f"{server}/?setting=local-private&k=1000&alpha=0.1&eps1=1&eps2=0.25")
    page.get_by_label("Domain size k").fill("2.5")
    page.get_by_role("button", name="Plan", exact=True).click()
    page.wait_for_selector("#k-error")
    args = ["plan", "--model", "local", "-k", "2.5", "--alpha", "0.1", "--eps1", "1"]
    code = main([*args, "--eps2", "0.25"])
    assert code == 2
    line = capsys.readouterr().err.strip().removeprefix("error: ")
    assert page.locator("#k-error").inner_text() == line
    assert page.get_by_label("Domain size k").get_attribute("aria-invalid") == "true"
    page.close()


def test_the_page_fits_a_phone(server, browser) -> None:
    page = browser.new_page()
    page.set_viewport_size({"width": 375, "height": 740})
    page.goto(f"{server}/?k=1000&alpha=0.1&eps1=1&eps2=0.25&delta=1e-6")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375
    assert page.locator("#compare-table tbody tr").count() == 5
    for name in ("Domain size k", "Distance α (TV)", "Group 1's ε1", "Setting"):
        assert page.get_by_label(name).is_visible()
    page.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
