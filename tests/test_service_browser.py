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
    # the five settings and each mechanism alone (k-RR, a channel per group, a shared
    # hash, the central model's noisy histogram per group, the multi-message shuffle on
    # either coin), and the own protocol alone of the three settings whose plan runs a
    # mechanism (local private, both shuffle coins)
    assert page.locator("#compare-table tbody tr").count() == 14
    for name in ("Domain size k", "Distance α (TV)", "Group 1's ε1", "Setting"):
        assert page.get_by_label(name).is_visible()
    page.close()


def test_every_bad_field_is_marked_at_once(server, browser) -> None:
    page = browser.new_page()
    page.goto(f"{server}/?setting=central&k=1000&alpha=0.1&eps1=1&eps2=0.25")
    page.get_by_label("Domain size k").fill("2.5")
    page.get_by_label("Distance α (TV)").fill("1.5")
    page.get_by_label("Group 2's ε2").fill("-1")
    page.get_by_role("button", name="Plan", exact=True).click()
    page.wait_for_selector("#k-error")
    for name, label, fragment in (
        ("k", "Domain size k", "invalid k = '2.5': must be an integer in [2"),
        ("alpha", "Distance α (TV)", "invalid alpha = '1.5': must be a number in [1e-06, 1]"),
        ("eps2", "Group 2's ε2", "invalid eps2 = '-1': must be a number in [0.0001, 20]"),
    ):
        assert fragment in page.locator(f"#{name}-error").inner_text()
        assert page.get_by_label(label).get_attribute("aria-invalid") == "true"
    assert page.locator(".error").count() == 3
    page.close()


FIELDS = ("k", "alpha", "eps1", "eps2", "delta", "beta", "cost1", "cost2", "n2")


def _shown(page) -> dict[str, str]:
    values = {name: page.locator(f"#{name}").input_value() for name in FIELDS}
    values["setting"] = page.locator("#setting").input_value()
    values["allocation"] = page.locator("#allocation").input_value()
    return values


def test_the_permalink_round_trips_every_field(server, browser) -> None:
    """Each field set in the form (δ emptied, β filled, …) comes back from the permalink:
    the page a colleague opens is this page."""
    page = browser.new_page()
    page.goto(f"{server}/")
    page.locator("#setting").select_option("central")
    filled = {"k": "2000", "alpha": "0.2", "eps1": "0.8", "eps2": "0.3", "delta": ""}
    filled |= {"beta": "0.05", "cost1": "2", "cost2": "3"}
    for name, value in filled.items():
        page.locator(f"#{name}").fill(value)
    page.locator("#allocation").select_option("cost")
    page.get_by_role("button", name="Plan", exact=True).click()
    page.wait_for_url("**cost1=2**")
    before = _shown(page)
    assert before["delta"] == "" and before["allocation"] == "cost" and before["beta"] == "0.05"
    page.locator("#permalink").click()
    page.wait_for_load_state()
    assert _shown(page) == before
    # and a fixed-n2 plan, in the shuffle model with δ given
    page.locator("#setting").select_option("shuffle-private")
    page.locator("#allocation").select_option("fixed-n2")
    for name, value in {"delta": "1e-7", "beta": "", "cost1": "1", "cost2": "1"}.items():
        page.locator(f"#{name}").fill(value)
    page.locator("#n2").fill("400000")
    page.get_by_role("button", name="Plan", exact=True).click()
    page.wait_for_url("**n2=400000**")
    before = _shown(page)
    fresh = browser.new_page()
    fresh.goto(server + page.locator("#permalink").get_attribute("href"))
    assert _shown(fresh) == before
    fresh.close()
    page.close()


def test_simulate_this_query_starts_a_job_and_links_to_it(server, browser) -> None:
    page = browser.new_page()
    # k = 12, α = 0.005: outside every covered region a shuffle query may run (below every
    # protocol's covered α, on its own 12 bins and on 16), inside what may be simulated
    query = "setting=shuffle-public&k=12&alpha=0.005&eps1=1&eps2=0.05&delta=1e-6&allocation=paper"
    page.goto(f"{server}/?{query}")
    assert "--simulation-budget" not in page.content()
    page.get_by_role("button", name="Simulate this query").click()
    link = page.locator("#simulate-link a")
    link.wait_for(timeout=30_000)
    href = link.get_attribute("href")
    assert href is not None and href.startswith("/v1/validations/")
    job = page.request.get(server + href).json()
    assert job["kind"] == "plan" and job["request"]["k"] == "12"
    page.request.delete(server + href)  # not run to its end here (tests/test_service.py does)
    page.close()


def test_a_scroll_hint_shows_only_while_a_table_overflows(server, browser) -> None:
    page = browser.new_page()
    page.set_viewport_size({"width": 390, "height": 800})
    page.goto(f"{server}/?k=1000&alpha=0.1&eps1=1&eps2=0.25&delta=1e-6")
    box = page.locator(".scroll:has(#compare-table)")
    assert box.evaluate("b => b.scrollWidth > b.clientWidth")  # the total column is cut off
    hint = page.locator(".scroll-hint").first
    assert hint.is_visible() and "scroll" in hint.inner_text()
    page.set_viewport_size({"width": 1200, "height": 800})
    page.wait_for_function("document.querySelector('.scroll-hint').hidden")
    assert not hint.is_visible()
    page.close()


def test_the_token_page_is_styled_and_says_a_token_is_wrong(browser, tmp_path) -> None:
    token = "browser-token-0123456789"
    port = free_port()
    process = start_server(port, tmp_path / "token.sqlite3", "--token", token)
    try:
        page = browser.new_page()
        page.goto(f"http://127.0.0.1:{port}/?k=500")
        assert page.locator("#token-error").count() == 0
        colour = page.locator("button").evaluate("b => getComputedStyle(b).backgroundColor")
        assert colour == "rgb(27, 108, 168)"  # the calculator's style sheet
        page.get_by_label("Token").fill("not-the-token")
        page.get_by_role("button", name="Open the planner").click()
        page.wait_for_selector("#token-error")
        assert "not this server's token" in page.locator("#token-error").inner_text()
        page.get_by_label("Token").fill(token)
        page.get_by_role("button", name="Open the planner").click()
        page.wait_for_selector("#query")
        assert page.get_by_label("Domain size k").input_value() == "500"
        page.close()
    finally:
        stop_server(process)


def test_docs_is_interactive_and_loads_with_no_network(server, browser) -> None:
    page = browser.new_page()
    elsewhere: list[str] = []

    def only_this_server(route) -> None:
        if route.request.url.startswith(server):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_server)
    page.goto(f"{server}/docs")
    page.wait_for_selector(".opblock", timeout=30_000)
    assert page.locator(".opblock").count() >= 10
    page.locator(".opblock-summary", has_text="/v1/plan").first.click()  # open POST /v1/plan
    description = page.locator(".opblock-description-wrapper").first
    description.wait_for()
    assert description.locator("code", has_text="planner plan --json").count() == 1  # Markdown
    assert "``" not in page.inner_text("body")
    assert elsewhere == []
    page.close()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
