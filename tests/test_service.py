"""The HTTP service through the real app: same numbers as the CLI, errors as one line, jobs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from planner.cli import main
from planner.inputs import InputError
from planner.service import create_app
from planner.service.store import JobStatus, JobStore

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SHUFFLE = {"model": "shuffle", "k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.25, "delta": 1e-6}
SMALL_JOB = {"model": "central", "k": 64, "alpha": 0.3, "eps1": 1, "eps2": 0.5, "trials": 60}


def cli_json(args: list[str], capsys) -> dict:
    code = main(args)
    captured = capsys.readouterr()
    assert code in (0, 1, 3), captured.err
    return json.loads(captured.out)


def flags(query: dict) -> list[str]:
    out: list[str] = []
    for name, value in query.items():
        out += [f"--{name}" if len(name) > 1 else f"-{name}", str(value)]
    return out


@pytest.fixture
def client(tmp_path: Path):
    app = create_app(tmp_path / "jobs.sqlite3", workers=1, time_limit=120)
    with TestClient(app) as test_client:
        yield test_client


@pytest.fixture
def idle_client(tmp_path: Path):
    """Jobs are queued but never run (for the queue's own behaviour)."""
    app = create_app(tmp_path / "idle.sqlite3", workers=1, run_jobs=False)
    with TestClient(app) as test_client:
        yield test_client


def wait_for(client: TestClient, job_id: str, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/v1/validations/{job_id}").json()
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still {job['status']} after {timeout} s")


@pytest.mark.parametrize(
    "query",
    [
        SHUFFLE,
        {"model": "local", "coin": "public", "k": 300, "alpha": 0.2, "eps1": 1, "eps2": 0.5},
        {"model": "central", "k": 4096, "alpha": 0.05, "eps1": 0.3, "eps2": 0.9, "beta": 0.05},
    ],
)
def test_plan_is_the_cli_json(client, capsys, query) -> None:
    response = client.post("/v1/plan", json=query)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == cli_json(["plan", *flags(query), "--json"], capsys)


def test_plan_with_allocation_and_strings_is_the_cli_json(client, capsys) -> None:
    query = {"model": "shuffle", "k": "1000", "alpha": "0.1", "eps1": "1", "eps2": "0.25"}
    query |= {"delta": "1e-6", "allocation": "fixed-n2", "n2": "300000"}
    response = client.post("/v1/plan", json=query)
    expected = cli_json(["plan", *flags(query), "--json"], capsys)
    assert response.status_code == 200 and response.json() == expected
    assert response.json()["allocation"]["n_users_group2"] == 300000


def test_compare_solve_and_sweep_are_the_cli_outputs(client, capsys) -> None:
    query = {"k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.25, "delta": 1e-6}
    compared = client.post("/v1/compare", json=query).json()
    assert compared == cli_json(["compare", *flags(query), "--json"], capsys)
    assert compared["plans"][0]["setting"] == "central"

    solve = {"model": "central", "k": 1000, "alpha": 0.1, "eps1": 1, "n1": 10000, "n2": 400000}
    solved = client.post("/v1/solve", json=solve).json()
    assert solved == cli_json(["solve", *flags(solve), "--json"], capsys)
    assert solved["feasible"] and solved["plan"]["n_users_group2"] <= 400000

    sweep = {"settings": ["central", "shuffle-private"], "k": 1000, "alpha": [0.1, 0.2]}
    sweep |= {"eps1": 1, "eps2": "0.05:1:4log", "delta": 1e-6}
    cli = ["sweep", "-s", "central", "-s", "shuffle-private", "-k", "1000", "--alpha", "0.1,0.2"]
    cli += ["--eps1", "1", "--eps2", "0.05:1:4log", "--delta", "1e-6"]
    document = client.post("/v1/sweep", json=sweep).json()
    assert document == cli_json([*cli, "--format", "json"], capsys)
    assert len(document["rows"]) == 2 * 2 * 4
    csv = client.post("/v1/sweep", json=sweep, headers={"Accept": "text/csv"})
    assert csv.headers["content-type"].startswith("text/csv")
    main([*cli, "--format", "csv"])
    assert csv.text == capsys.readouterr().out
    # each setting's own protocol alone: the field ``alone`` is the CLI's --alone
    alone = client.post("/v1/sweep", json={**sweep, "alone": True}).json()
    assert alone == cli_json([*cli, "--alone", "--format", "json"], capsys)
    assert {row["protocol"] for row in alone["rows"]} == {"central", "shuffle-private"}
    assert alone["notes"][0].startswith("each setting's own protocol runs alone")
    refused = client.post("/v1/sweep", json={**sweep, "alone": "yes"})
    assert refused.status_code == 422
    assert refused.json() == {
        "error": 'invalid alone = "yes": must be true or false',
        "parameter": "alone",
    }


def test_explain_version_health_and_openapi(client, capsys) -> None:
    explained = client.get("/v1/explain", params={"model": "local", "coin": "public"}).json()
    assert explained["schema"] == "planner.explain/1"
    assert explained["bounds"][0]["terms"]
    shown = cli_json(["explain", "--model", "local", "--coin", "public", "--json"], capsys)
    assert explained == shown  # the CLI's --json document
    version = client.get("/v1/version").json()
    from planner.constants import default_constants

    assert version["constants_version"] == default_constants().version
    assert client.get("/v1/health").json()["status"] == "ok"
    spec = client.get("/openapi.json").json()
    for path in ("/v1/plan", "/v1/compare", "/v1/solve", "/v1/sweep", "/v1/validations"):
        assert path in spec["paths"]
    plan_schema = spec["components"]["schemas"]["PlanRequest"]
    assert {"model", "k", "alpha", "eps1", "eps2"} <= set(plan_schema["required"])
    docs = client.get("/docs")
    assert docs.status_code == 200
    assert "SwaggerUIBundle" in docs.text and "url: '/openapi.json'" in docs.text
    assert "cdn" not in docs.text.lower()


@pytest.mark.parametrize(
    ("path", "body", "parameter", "fragment"),
    [
        ("/v1/plan", {**SHUFFLE, "k": 2.5}, "k", "invalid k = 2.5: must be an integer in [2"),
        ("/v1/plan", {**SHUFFLE, "alpha": 1.5}, "alpha", "must be a number in [1e-06, 1]"),
        ("/v1/plan", {**SHUFFLE, "delta": None}, "delta", "given for the shuffle model"),
        ("/v1/plan", {**SHUFFLE, "eps2": "NaN"}, "eps2", "invalid eps2"),
        ("/v1/plan", {**SHUFFLE, "model": "quantum"}, "model", "one of local, shuffle"),
        ("/v1/plan", {**SHUFFLE, "k": True}, "k", "invalid k"),
        ("/v1/plan", {**SHUFFLE, "colour": "red"}, "colour", "not a field"),
        ("/v1/plan", {"model": "local"}, "k", "must be given"),
        ("/v1/plan", [1, 2], "body", "must be a JSON object"),
        ("/v1/solve", {**SHUFFLE, "n1": 5, "eps2": None}, "unknown", "exactly one of"),
        ("/v1/sweep", {"k": 10, "alpha": 0.1, "eps1": 1, "eps2": "1:2:1e9"}, "rows", "at most"),
        ("/v1/sweep", {"k": 10, "alpha": "x:y", "eps1": 1, "eps2": 1}, "alpha", "a range"),
        (
            "/v1/sweep",
            {"k": list(range(2, 1003)), "alpha": 0.1, "eps1": 1, "eps2": 1},
            "k",
            "must be a list of at most 1000 values",
        ),
        ("/v1/validations", {**SMALL_JOB, "families": ["uniform"] * 33}, "families", "32 values"),
        (
            "/v1/validations",
            {**SMALL_JOB, "trials": 10**6},
            "trials",
            "auto or an integer in [1, 25,600]",
        ),
        ("/v1/validations", {**SMALL_JOB, "trials": 0}, "trials", "in [1, 25,600]"),
        ("/v1/validations", {**SMALL_JOB, "trials": True}, "trials", "auto or an integer in"),
        ("/v1/validations", {**SMALL_JOB, "max_trials": 0}, "max_trials", "in [200, 25600]"),
        ("/v1/validations", {**SMALL_JOB, "max_trials": True}, "max_trials", "in [200, 25600]"),
        ("/v1/validations", {**SMALL_JOB, "kind": "exact", "trials": 0}, "trials", "[50, 5000]"),
        ("/v1/validations", {**SMALL_JOB, "seed": True}, "seed", "in [0, 9223372036854775807]"),
        ("/v1/validations", {**SMALL_JOB, "seed": -1}, "seed", "in [0, 9223372036854775807]"),
        (
            "/v1/validations",
            {**SMALL_JOB, "kind": "exact", "max_trials": -5},
            "max_trials",
            "left out of a job of kind exact",
        ),
        ("/v1/validations", {**SMALL_JOB, "kind": "plan", "trials": 0}, "trials", "kind plan"),
        ("/v1/validations", {**SMALL_JOB, "simulation_budget": 5}, "simulation_budget", "left"),
        ("/v1/validations", {**SMALL_JOB, "k": 10**9}, "k", "for a validation job"),
        ("/v1/plan", {**SHUFFLE, "cost1": 2}, "cost1", "given with allocation cost only"),
        ("/v1/plan", {**SHUFFLE, "n2": 5000}, "n2", "given with allocation fixed-n2 only"),
        ("/v1/validations", {**SMALL_JOB, "cost2": "3"}, "cost2", "allocation cost only"),
        ("/v1/validations", {**SMALL_JOB, "families": ["nope"]}, "families", "one of uniform"),
        ("/v1/validations", {**SMALL_JOB, "kind": "nap"}, "kind", "invalid kind"),
        (
            "/v1/validations",
            {**SMALL_JOB, "path": "user", "n1": 10**7, "n2": 10**7, "trials": 100},
            "path",
            "trials × messages ≤ 2e+07 on the user path",  # the CLI's line and limit
        ),
        (  # 25,600 trials × k = 20,000 = 5.1e8 > 4e8 (a vote is checked through one run)
            "/v1/validations",
            {**SMALL_JOB, "k": 20000, "eps1": 5, "eps2": 2, "beta": 0.01, "trials": 25600},
            "trials",
            "trials × k ≤",
        ),
        # refused at submission as the CLI refuses them, not accepted and failed later
        (
            "/v1/validations",
            {**SMALL_JOB, "k": 100000, "trials": 4000, "path": "fast"},
            "trials",
            "k × trials × families",
        ),
        ("/v1/validations", {**SMALL_JOB, "n1": 10**16, "n2": 10**16}, "n1", "to simulate"),
        ("/v1/validations", {**SMALL_JOB, "kind": "exact", "k": 100000}, "exact", "within 300 s"),
    ],
)
def test_bad_input_is_422_with_one_line_naming_the_parameter(
    idle_client, path, body, parameter, fragment
) -> None:
    response = idle_client.post(path, json=body)
    assert response.status_code == 422, response.text
    error = response.json()
    assert error["parameter"] == parameter
    assert fragment in error["error"]
    assert "\n" not in error["error"] and len(error["error"]) < 300
    assert "--" not in error["error"]  # the request's field names, not the CLI's options
    assert idle_client.get("/v1/validations").json()["total"] == 0


@pytest.mark.parametrize(
    ("query", "parameter", "fragment"),
    [
        ("limit=0", "limit", "must be an integer in [1, 100]"),
        ("limit=abc", "limit", "must be an integer in [1, 100]"),
        ("limit=101", "limit", "must be an integer in [1, 100]"),
        ("offset=-1", "offset", "must be an integer in [0, 1000000000]"),
        ("limit=5&limit=7", "limit", "must be given once (it appears twice)"),
        ("limit=5&ofset=7", "ofset", "must be left out (the query parameters here are limit"),
    ],
)
def test_a_bad_page_is_422_naming_its_range(idle_client, query, parameter, fragment) -> None:
    response = idle_client.get(f"/v1/validations?{query}")
    assert response.status_code == 422, response.text
    assert response.json()["parameter"] == parameter
    assert fragment in response.json()["error"]


def test_an_unknown_query_parameter_is_refused_not_ignored(idle_client) -> None:
    """A misspelt ``?as_stat=true`` must not silently answer for the default."""
    response = idle_client.get("/v1/explain?model=central&as_stat=true")
    assert response.status_code == 422
    assert response.json() == {
        "error": "invalid as_stat = 'true': must be left out "
        "(the query parameters here are as_stated, coin, model)",
        "parameter": "as_stat",
    }
    response = idle_client.post("/v1/plan?beta=0.1", json=SHUFFLE)
    assert response.status_code == 422
    assert "this route takes no query parameters" in response.json()["error"]
    assert idle_client.get("/v1/explain?model=central&as_stated=true").status_code == 200


def test_default_costs_and_null_fields_are_accepted_as_left_out(idle_client) -> None:
    """The calculator sends cost1 = cost2 = "1" with every request; a null n2 on a job
    that does not read n2 is as if left out (the CLI refuses only options typed)."""
    assert (
        idle_client.post("/v1/plan", json={**SHUFFLE, "cost1": "1.00", "cost2": 1.0}).status_code
        == 200
    )
    exact = {**SMALL_JOB, "kind": "exact", "n2": None}
    exact.pop("trials")
    assert idle_client.post("/v1/validations", json=exact).status_code == 202


def test_a_job_echoes_its_default_costs_as_numbers(idle_client) -> None:
    """A job's request echoes every number as a number: the default costs were the text
    "1" beside numbers (a review); a cost given as text is echoed as given."""
    job = idle_client.post("/v1/validations", json=SMALL_JOB).json()
    assert job["request"]["cost1"] == 1 and job["request"]["cost2"] == 1
    assert not isinstance(job["request"]["cost1"], str)
    given = idle_client.post("/v1/validations", json={**SMALL_JOB, "cost2": "1.0"}).json()
    assert given["request"]["cost2"] == "1.0" and given["request"]["cost1"] == 1


def test_a_field_named_twice_is_422_not_its_last_value(idle_client) -> None:
    """JSON parsers keep the last of two equal keys; the service refuses the body instead."""
    twice = (
        '{"model": "central", "model": "local", "k": 256, "alpha": 0.15, "eps1": 1, "eps2": 0.5}'
    )
    headers = {"content-type": "application/json"}
    for path in ("/v1/plan", "/v1/validations"):
        response = idle_client.post(path, content=twice, headers=headers)
        assert response.status_code == 422, response.text
        assert response.json() == {
            "error": 'invalid model = "local": must be given once (the body names it twice)',
            "parameter": "model",
        }
    once = twice.replace('"model": "local", ', "")
    assert idle_client.post("/v1/plan", content=once, headers=headers).status_code == 200
    inside = once.replace('"k": 256', '"k": {"n": 1, "n": 2}')  # named twice inside a field
    response = idle_client.post("/v1/plan", content=inside, headers=headers)
    assert response.status_code == 422 and response.json()["parameter"] == "k"
    deep = once.replace('"k": 256', '"k": ' + "[" * 600 + "]" * 600)  # within the parser's
    response = idle_client.post("/v1/plan", content=deep, headers=headers)  # depth: no 500
    assert response.status_code == 422 and response.json()["parameter"] == "k"
    nested = "[" * 30_000 + "]" * 30_000  # under the size cap, past the parser's depth
    response = idle_client.post("/v1/plan", content=nested, headers=headers)
    assert response.status_code == 400 and response.json()["parameter"] == "body"
    empty = idle_client.post("/v1/solve", content="", headers=headers)  # no body at all
    assert empty.status_code == 400 and empty.json()["parameter"] == "body", empty.text
    assert empty.json()["error"] == "invalid body: must be a JSON object (the request has none)"
    for broken in ("{bad json", '{"k": 256,}'):  # not JSON at all: 400, as docs/service.md says
        response = idle_client.post("/v1/plan", content=broken, headers=headers)
        assert response.status_code == 400, response.text
        assert response.json() == {
            "error": "invalid body: must be a JSON object (it is not valid JSON)",
            "parameter": "body",
        }
    assert idle_client.get("/v1/validations").json()["total"] == 0


def test_size_limits_and_unknown_routes(idle_client) -> None:
    big = idle_client.post(
        "/v1/plan",
        content=b"{" + b" " * 70_000 + b"}",
        headers={"content-type": "application/json"},
    )
    assert big.status_code == 413 and big.json()["parameter"] == "body"

    def chunks():
        for _ in range(20):
            yield b" " * 8192

    streamed = idle_client.post(
        "/v1/plan", content=chunks(), headers={"content-type": "application/json"}
    )
    assert streamed.status_code == 413
    assert idle_client.post("/v1/plan", content=b"{nope").status_code == 422
    assert idle_client.get("/v1/nothing").status_code == 404
    assert idle_client.get("/v1/plan").status_code == 405
    assert idle_client.get("/v1/validations/zzz").status_code == 422
    missing = idle_client.get("/v1/validations/" + "0" * 32)
    assert missing.status_code == 404 and missing.json()["parameter"] == "id"
    job = idle_client.post("/v1/validations", json=SMALL_JOB).json()["id"]
    assert idle_client.get(f"/v1/validations/{job.upper()}").json()["id"] == job  # any case
    assert idle_client.get("/v1/validations", params={"limit": 0}).status_code == 422
    # an operator's filter: only the jobs in one state
    assert idle_client.delete(f"/v1/validations/{job}").status_code == 200
    idle_client.post("/v1/validations", json=SMALL_JOB)
    cancelled = idle_client.get("/v1/validations", params={"status": "cancelled"}).json()
    assert cancelled["total"] == 1 and [j["id"] for j in cancelled["jobs"]] == [job]
    queued = idle_client.get("/v1/validations", params={"status": "queued"}).json()
    assert queued["total"] == 1 and queued["jobs"][0]["status"] == "queued"
    refused = idle_client.get("/v1/validations", params={"status": "nope"})
    assert refused.status_code == 422 and "one of queued, running, done" in refused.json()["error"]


def test_a_validation_job_reports_the_cli_json_with_progress_and_provenance(client, capsys) -> None:
    body = {**SMALL_JOB, "seed": 11, "families": ["uniform", "zipf-1", "paninski"]}
    started = client.post("/v1/validations", json=body)
    assert started.status_code == 202
    assert started.headers["location"] == f"/v1/validations/{started.json()['id']}"
    job = wait_for(client, started.json()["id"])
    assert job["status"] == "done", job["error"]
    assert job["progress"] == {
        "done": 3,
        "total": 3,
        "fraction": 1.0,
        "last": job["progress"]["last"],
    }
    assert job["provenance"]["seed"] == 11 and job["provenance"]["trials"] == 60
    assert job["provenance"]["started"] and job["provenance"]["finished"]
    cli = ["validate", "--model", "central", "-k", "64", "--alpha", "0.3", "--eps1", "1"]
    cli += ["--eps2", "0.5", "--trials", "60", "--seed", "11"]
    cli += ["--family", "uniform", "--family", "zipf-1", "--family", "paninski", "--json"]
    expected = cli_json(cli, capsys)
    report = dict(job["report"])
    report.pop("elapsed_seconds"), expected.pop("elapsed_seconds")
    assert report == expected

    again = client.post(f"/v1/validations/{job['id']}/rerun")
    assert again.status_code == 202
    rerun = wait_for(client, again.json()["id"])
    assert rerun["provenance"]["rerun_of"] == job["id"]
    rerun["report"].pop("elapsed_seconds")
    assert rerun["report"] == report  # same request and seed: the same stored report

    listed = client.get("/v1/validations", params={"limit": 1}).json()
    assert listed["total"] == 2 and len(listed["jobs"]) == 1 and listed["next_offset"] == 1
    assert "report" not in listed["jobs"][0]
    second = client.get("/v1/validations", params={"limit": 1, "offset": 1}).json()
    assert {listed["jobs"][0]["id"], second["jobs"][0]["id"]} == {job["id"], rerun["id"]}


def test_a_validation_job_checks_the_protocol_asked_by_name_as_the_cli_does(client, capsys) -> None:
    """A job with ``protocol`` checks that protocol's plan alone with its tester: the
    CLI's ``validate --protocol`` report, to the number (same seed); not the default
    plan's sizes (the multi-message protocol needs fewer users at this query). An exact job
    refuses a key that is no protocol of the query, and a plan job refuses the field."""
    query = {"model": "shuffle", "k": 100, "alpha": 0.3, "eps1": 1, "eps2": 0.5, "delta": 1e-6}
    body = {**query, "protocol": "shuffle-private", "trials": 200, "seed": 3}
    job = wait_for(
        client, client.post("/v1/validations", json={**body, "families": ["uniform"]}).json()["id"]
    )
    assert job["status"] == "done", job["error"]
    cli = ["validate", *flags(query), "--protocol", "shuffle-private", "--family", "uniform"]
    expected = cli_json([*cli, "--trials", "200", "--seed", "3", "--json"], capsys)
    report = dict(job["report"])
    report.pop("elapsed_seconds"), expected.pop("elapsed_seconds")
    assert report == expected and report["protocol"] == "shuffle-private"
    default = cli_json(["plan", *flags(query), "--json"], capsys)
    assert default["protocol"] == "shuffle-private+messages"
    assert report["n_users_group1"] + report["n_users_group2"] > default["total_users"]
    for kind in ("exact", "plan"):
        refused = client.post("/v1/validations", json={**query, "kind": kind, "protocol": "x"})
        assert refused.status_code == 422 and refused.json()["parameter"] == "protocol"
    wrong = client.post("/v1/validations", json={**query, "protocol": "central"})
    assert wrong.status_code == 422 and "shuffle-private" in wrong.json()["error"]


def test_an_exact_job_gives_the_plan_exact_document(client, capsys) -> None:
    body = {"kind": "exact", "model": "central", "k": 16, "alpha": 0.5, "eps1": 1, "eps2": 1}
    body |= {"trials": 100, "seed": 3}
    job = wait_for(client, client.post("/v1/validations", json=body).json()["id"], 240)
    assert job["status"] == "done", job["error"]
    cli = ["plan", "--model", "central", "-k", "16", "--alpha", "0.5", "--eps1", "1"]
    cli += ["--eps2", "1", "--exact", "--trials", "100", "--seed", "3", "--json"]
    assert job["report"] == cli_json(cli, capsys)


def test_an_exact_job_with_a_protocol_gives_plan_protocol_exact(client, capsys) -> None:
    """``planner plan --protocol KEY --exact`` searches that protocol's own plan (it was
    refused while a plan's β line suggested --exact; a review), and the exact job with
    ``protocol`` gives its document, to the number."""
    query = {"model": "shuffle", "k": 100, "alpha": 0.3, "eps1": 1, "eps2": 0.5, "delta": 1e-6}
    body = {**query, "kind": "exact", "protocol": "shuffle-private", "trials": 100, "seed": 3}
    job = wait_for(client, client.post("/v1/validations", json=body).json()["id"], 240)
    assert job["status"] == "done", job["error"]
    cli = ["plan", *flags(query), "--protocol", "shuffle-private", "--exact"]
    expected = cli_json([*cli, "--trials", "100", "--seed", "3", "--json"], capsys)
    assert job["report"] == expected
    assert expected["protocol"] == "shuffle-private"
    assert expected["exact"]["protocol"] == "shuffle-private" and expected["exact"]["found"]
    paper = client.post("/v1/validations", json={**body, "allocation": "paper"})
    assert paper.status_code == 422 and paper.json()["parameter"] == "protocol"


def test_cancel_a_queued_job_and_a_running_one(tmp_path, idle_client) -> None:
    queued = idle_client.post("/v1/validations", json=SMALL_JOB).json()
    again = idle_client.post(f"/v1/validations/{queued['id']}/rerun")  # not a second copy
    assert again.status_code == 409 and "is still queued" in again.json()["error"]
    cancelled = idle_client.delete(f"/v1/validations/{queued['id']}")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    twice = idle_client.delete(f"/v1/validations/{queued['id']}")  # it says so, not 200
    assert twice.status_code == 409 and "already finished (cancelled)" in twice.json()["error"]
    assert idle_client.post(f"/v1/validations/{queued['id']}/rerun").status_code == 202

    app = create_app(tmp_path / "cancel.sqlite3", workers=1, time_limit=120)
    with TestClient(app) as client:
        slow = {**SMALL_JOB, "k": 4096, "trials": 10_000, "path": "fast"}
        job_id = client.post("/v1/validations", json=slow).json()["id"]
        deadline = time.monotonic() + 30
        while client.get(f"/v1/validations/{job_id}").json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        client.delete(f"/v1/validations/{job_id}")
        job = wait_for(client, job_id, 30)
        assert job["status"] == "cancelled" and job["report"] is None


def test_a_job_over_its_time_limit_is_stopped(tmp_path) -> None:
    app = create_app(tmp_path / "limit.sqlite3", workers=1, time_limit=1)
    with TestClient(app) as client:
        slow = {**SMALL_JOB, "k": 4096, "trials": 10_000, "path": "fast"}
        started = time.monotonic()
        job = wait_for(client, client.post("/v1/validations", json=slow).json()["id"], 30)
        assert job["status"] == "failed" and "time limit of 1 s" in job["error"]
        assert time.monotonic() - started < 15


def test_jobs_left_running_are_interrupted_when_the_server_starts(tmp_path) -> None:
    database = tmp_path / "crash.sqlite3"
    store = JobStore(database)
    job = store.create(
        "validate",
        SMALL_JOB,
        seed=0,
        trials=60,
        code_version="x",
        constants_version="y",
        progress_total=11,
    )
    assert store.mark_running(job.id)
    store.close()
    with TestClient(create_app(database, run_jobs=False)) as client:
        shown = client.get(f"/v1/validations/{job.id}").json()
        assert shown["status"] == JobStatus.INTERRUPTED.value
        assert "rerun" in shown["error"]


def test_a_token_guards_everything_but_health(tmp_path) -> None:
    token = "s3cret-token-0123456789"
    app = create_app(tmp_path / "auth.sqlite3", token=token, run_jobs=False)
    with TestClient(app) as client:
        assert client.post("/v1/plan", json=SHUFFLE).status_code == 401
        wrong = client.post("/v1/plan", json=SHUFFLE, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "token" in wrong.json()["error"]
        good = client.post("/v1/plan", json=SHUFFLE, headers={"Authorization": f"Bearer {token}"})
        assert good.status_code == 200
        assert client.get("/v1/health").status_code == 200
        assert client.get("/").status_code == 401
        login = client.get(f"/?token={token}&k=500", follow_redirects=False)
        assert login.status_code == 303 and "token" not in login.headers["location"]
        page = client.get(login.headers["location"])  # the cookie now carries the token
        assert page.status_code == 200 and 'value="500"' in page.text
    # every route but those docs/service.md names as open answers 401 without the token
    open_paths = {"/v1/health", "/docs", "/openapi.json", "/static/{name}", "/docs/assets/{name}"}
    with TestClient(create_app(tmp_path / "auth2.sqlite3", token=token, run_jobs=False)) as bare:
        for route in app.routes:
            path, methods = getattr(route, "path", ""), getattr(route, "methods", None) or set()
            concrete = path.replace("{job_id}", "0" * 32).replace("{name}", "calculator.css")
            for method in methods - {"HEAD"}:
                code = bare.request(method, concrete, follow_redirects=False).status_code
                assert (code == 401) == (path not in open_paths), (method, path, code)


def test_serve_passes_its_options_to_the_server(monkeypatch, tmp_path) -> None:
    from planner.service import server

    seen: dict = {}
    monkeypatch.setattr(server, "serve", lambda **options: seen.update(options))
    database = tmp_path / "j.sqlite3"
    assert main(["serve", "--port", "8123", "--db", str(database), "--access-log"]) == 0
    assert seen["port"] == 8123 and seen["database"] == database and seen["access_log"] is True
    assert main(["serve", "--db", str(database)]) == 0 and seen["access_log"] is False


def test_a_public_address_needs_a_token(capsys) -> None:
    from planner.service.server import check_binding, is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.1")
    check_binding("0.0.0.0", "a-long-enough-token")
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid host = '0.0.0.0'" in err and "--token" in err
    assert main(["serve", "--port", "70000"]) == 2
    assert "invalid port" in capsys.readouterr().err


def _cells(html: str, field: str) -> list[int]:
    found = re.findall(rf'data-field="{field}"[^>]*>([\d,]+)<', html)
    return [int(value.replace(",", "")) for value in found]


def test_the_page_shows_the_cli_numbers_and_a_plot(client, capsys) -> None:
    query = {"k": 1000, "alpha": 0.1, "eps1": 1, "eps2": 0.25, "delta": 1e-6}
    page = client.get("/", params=query)
    assert page.status_code == 200
    compared = cli_json(["compare", *flags(query), "--json"], capsys)
    assert _cells(page.text, "total") == [plan["total_users"] for plan in compared["plans"]]
    assert "<svg" in page.text and "<title" in page.text
    # each row's messages per user: "1" for a local row (one report a user), "—" for a
    # curator's, each shuffle group's figure to 3 digits (one where both groups agree)
    shown = re.findall(r'data-field="messages">([^<]*)<', page.text)
    assert len(shown) == len(compared["plans"])
    for cell, item in zip(shown, compared["plans"], strict=True):
        sent = [g["messages_per_user"] for g in item["groups"]]
        if item["inputs"]["model"] == "local":
            assert cell == "1"
        elif item["inputs"]["model"] == "central" and item["protocol"].startswith("central"):
            assert cell == "—"
        else:
            figures = [float(part) for part in cell.split(" / ")]
            assert len(figures) == (1 if f"{sent[0]:.3g}" == f"{sent[1]:.3g}" else 2)
            for figure, value in zip(figures * (3 - len(figures)), sent, strict=True):
                assert abs(figure - value) <= 0.005 * value
    # the Poisson shuffle protocol alone, beside the plan that runs the multi-message one:
    # fewer messages a user for more users, as planner plan --protocol shuffle-private
    rows = re.findall(r'data-protocol="([^"]*)"', page.text)
    assert rows == [item["protocol"] for item in compared["plans"]]
    assert "shuffle-private" in rows and "shuffle-private+messages" in rows
    poisson = compared["plans"][rows.index("shuffle-private")]
    messages = compared["plans"][rows.index("shuffle-private+messages")]
    assert poisson["total_users"] > messages["total_users"]
    assert max(g["messages_per_user"] for g in poisson["groups"]) < min(
        g["messages_per_user"] for g in messages["groups"]
    )

    single = client.get("/", params={**query, "setting": "shuffle-private"})
    expected = cli_json(["plan", "--model", "shuffle", *flags(query), "--json"], capsys)
    assert _cells(single.text, "users") == [g["n_users"] for g in expected["groups"]]
    assert _cells(single.text, "baseline") == [g["baseline_n_users"] for g in expected["groups"]]
    assert expected["bound"]["reference"] in single.text
    assert 'id="verify-button"' in single.text
    for name in ("k", "alpha", "eps1", "eps2", "delta", "beta"):
        assert f'<label for="{name}">' in single.text and f'id="{name}"' in single.text
    script = client.get("/static/calculator.js")
    assert script.status_code == 200 and "fetch(" in script.text
    assert "http" not in re.sub(r"https?://www\.w3\.org/2000/svg", "", single.text)


def test_a_bad_field_shows_the_cli_line_beside_it(client, capsys) -> None:
    page = client.get("/", params={"k": "2.5", "alpha": "0.1", "eps1": "1", "eps2": "0.1"})
    assert page.status_code == 422
    code = main(
        ["plan", "--model", "local", "-k", "2.5", "--alpha", "0.1", "--eps1", "1", "--eps2", "0.1"]
    )
    line = capsys.readouterr().err.strip().removeprefix("error: ")
    assert code == 2
    match = re.search(r'<p class="error" id="k-error" role="alert">([^<]*)</p>', page.text)
    assert match is not None and match.group(1).replace("&#x27;", "'") == line
    assert 'aria-invalid="true"' in page.text


def test_a_size_without_its_allocation_is_refused_on_the_page_as_by_post(idle_client) -> None:
    """A permalink with n2 and allocation fewest showed a plan whose Verify button then got
    a 422: the page refuses it beside the field, with POST /v1/plan's own line."""
    query = {"k": "16", "alpha": "0.5", "eps1": "1", "eps2": "1", "n2": "500"}
    page = idle_client.get("/", params={**query, "setting": "central", "allocation": "fewest"})
    posted = idle_client.post(
        "/v1/plan", json={**query, "model": "central", "allocation": "fewest"}
    )
    assert page.status_code == 422 and posted.status_code == 422
    match = re.search(r'<p class="error" id="n2-error" role="alert">([^<]*)</p>', page.text)
    assert match is not None
    assert match.group(1).replace("&#x27;", "'") == posted.json()["error"]
    assert 'id="verify-box"' not in page.text
    fixed = idle_client.get("/", params={**query, "setting": "central", "allocation": "fixed-n2"})
    assert fixed.status_code == 200 and 'id="verify-box"' in fixed.text


def test_in_range_values_whose_numbers_overflow_are_422_not_500(idle_client) -> None:
    response = idle_client.post("/v1/plan", json={**SHUFFLE, "alpha": 1e-320})
    assert response.status_code == 422
    assert response.json()["parameter"] in ("alpha", "inputs")
    assert "\n" not in response.json()["error"]
    page = idle_client.get("/", params={"setting": "central", "alpha": "1e-320"})
    assert page.status_code == 422 and 'role="alert"' in page.text


def test_outside_the_covered_region_plan_refuses_and_a_plan_job_simulates(client, capsys) -> None:
    pytest.importorskip("planner.coverage")
    # k = 12: below every paper protocol's covered k (16), and α = 0.005 below every
    # protocol's covered α (so the 16-bin domain a k = 12 query may run on is not covered)
    query = {"model": "shuffle", "coin": "public", "k": 12, "alpha": 0.005, "eps1": 1}
    query |= {"eps2": 0.05, "delta": 1e-6, "allocation": "paper"}
    refused = client.post("/v1/plan", json=query)
    assert refused.status_code == 422
    assert refused.json()["parameter"] == "k"
    assert "not covered" in refused.json()["error"] and "kind plan" in refused.json()["error"]
    # a review: the line named the CLI's simulation budget, no field of this request
    assert "POST /v1/plan does not simulate" in refused.json()["error"]
    assert "budget" not in refused.json()["error"]
    started = client.post("/v1/validations", json={**query, "kind": "plan"})
    assert started.status_code == 202
    job = wait_for(client, started.json()["id"], 240)
    assert job["status"] == "done", job["error"]
    cli = [sys.executable, "-m", "planner", "plan", *flags(query), "--json"]
    expected = json.loads(subprocess.run(cli, capture_output=True, check=True).stdout)
    assert job["report"] == expected and expected["coverage"] == "simulated"  # the CLI too


def test_a_job_with_default_trials_is_the_cli_default_validation(client, capsys) -> None:
    body = {"model": "local", "k": 64, "alpha": 0.3, "eps1": 1, "eps2": 0.5, "seed": 2}
    body |= {"families": ["uniform", "paninski"]}
    job = wait_for(client, client.post("/v1/validations", json=body).json()["id"], 240)
    assert job["status"] == "done", job["error"]
    cli = ["validate", "--model", "local", "-k", "64", "--alpha", "0.3", "--eps1", "1"]
    cli += ["--eps2", "0.5", "--seed", "2", "--family", "uniform", "--family", "paninski"]
    expected = cli_json([*cli, "--json"], capsys)
    report = dict(job["report"])
    report.pop("elapsed_seconds"), expected.pop("elapsed_seconds")
    assert report == expected
    assert job["progress"]["done"] == job["progress"]["total"] >= 2


def test_a_repeated_plan_is_the_same_bytes_and_errors_are_not_cached(idle_client) -> None:
    first = idle_client.post("/v1/plan", json=SHUFFLE)
    again = idle_client.post("/v1/plan", json=SHUFFLE)
    assert first.status_code == again.status_code == 200 and first.content == again.content
    cache = idle_client.app.state.service.cache
    assert cache.hits >= 1
    bad = {**SHUFFLE, "k": 1}
    assert idle_client.post("/v1/plan", json=bad).status_code == 422
    assert idle_client.post("/v1/plan", json=bad).status_code == 422
    from planner.service.cache import AnswerCache

    small = AnswerCache(size=2)
    for index in range(5):
        small.answer("plan", {"i": index}, lambda index=index: {"i": index})
    assert small.answer("plan", {"i": 4}, lambda: {"i": "recomputed"}) == '{"i": 4}'
    assert small.answer("plan", {"i": 0}, lambda: {"i": "recomputed"}) == '{"i": "recomputed"}'


def test_serve_refuses_a_bad_database_or_a_busy_port_in_one_line(tmp_path, capsys) -> None:
    import socket

    (tmp_path / "garbage.sqlite3").write_text("not a database")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = str(probe.getsockname()[1])
    for database in (tmp_path / "garbage.sqlite3", tmp_path):
        assert main(["serve", "--port", free, "--db", str(database)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("error: invalid db = ")
    assert not tmp_path.with_name(tmp_path.name + ".lock").exists()  # none made beside it
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--port", str(port), "--db", str(tmp_path / "j.sqlite3")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: invalid port = {port}")


def test_a_second_server_on_the_same_database_is_refused(tmp_path, capsys) -> None:
    """A fresh-user trial started a second server on one file: it marked the first one's
    running job ``interrupted`` while that job's process ran on, out of reach of DELETE."""
    import socket

    database = tmp_path / "shared.sqlite3"
    first = create_app(database, workers=1, run_jobs=False)
    with pytest.raises(InputError) as refused:
        create_app(database, workers=1, run_jobs=False)
    assert refused.value.parameter == "db" and f"process {os.getpid()} serves it" in str(
        refused.value
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = str(probe.getsockname()[1])
    assert main(["serve", "--port", free, "--db", str(database)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: invalid db = ")
    assert "no other planner serve is using" in err
    first.state.service.store.close()  # the lock goes with its holder
    create_app(database, workers=1, run_jobs=False).state.service.store.close()


def test_a_job_whose_process_dies_fails_alone(tmp_path) -> None:
    import os
    import signal

    app = create_app(tmp_path / "crash.sqlite3", workers=1, time_limit=120)
    with TestClient(app) as client:
        slow = {**SMALL_JOB, "k": 4096, "trials": 10_000, "path": "fast"}
        job_id = client.post("/v1/validations", json=slow).json()["id"]
        after = client.post("/v1/validations", json=SMALL_JOB).json()["id"]
        runner = app.state.service.runner
        deadline = time.monotonic() + 30
        while not runner._running:  # the job's own process, as the runner started it
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(next(iter(runner._running.values())).process.pid, signal.SIGKILL)
        job = wait_for(client, job_id, 30)
        assert job["status"] == "failed" and "without a result" in job["error"]
        assert wait_for(client, after)["status"] == "done"  # the server and queue go on


def test_the_forms_default_delta_is_left_out_of_a_local_or_central_plan(client) -> None:
    """The form fills in δ = 1e-6 for the shuffle settings; a central or local plan asked
    from it must not warn that δ is ignored (a review found every such plan did)."""
    for setting in ("central", "local-private"):
        page = client.get(f"/?setting={setting}&k=1000&alpha=0.1&eps1=1&eps2=0.25&delta=1e-6")
        assert page.status_code == 200 and "users needed" in page.text
        assert "is ignored" not in page.text
    shuffle = client.get("/?setting=shuffle-private&k=1000&alpha=0.1&eps1=1&eps2=0.25&delta=1e-6")
    # δ used: the multi-message protocol's messages per user (its flood is bought with δ)
    assert "users needed" in shuffle.text and "messages per user" in shuffle.text


def test_a_lone_surrogate_is_a_422_and_every_answer_is_strict_json(idle_client) -> None:
    """A hostile review: a lone surrogate in a numeric field was a 500 (the error line
    echoing it could not be encoded), and a sweep row echoing an input ``nan`` sent ``NaN``,
    which strict JSON parsers refuse."""
    headers = {"content-type": "application/json"}
    body = '{"model": "central", "k": "\\ud800", "alpha": 0.1, "eps1": 1, "eps2": 0.25}'
    response = idle_client.post("/v1/plan", content=body, headers=headers)
    assert response.status_code == 422 and response.json()["parameter"] == "k"

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    sweep = idle_client.post(
        "/v1/sweep", json={"k": 1000, "alpha": 0.1, "eps1": 1, "eps2": "0.1,nan"}
    )
    assert sweep.status_code == 200
    rows = json.loads(sweep.text, parse_constant=refuse)["rows"]
    assert any(row["eps2"] == "nan" and row["status"].startswith("error") for row in rows)


def test_a_slow_solve_does_not_hold_up_other_requests(idle_client, monkeypatch) -> None:
    """A fresh-user trial: /v1/health took as long as a 3 s solve running beside it (plan,
    compare and solve were computed on the event loop)."""
    import threading

    from planner import api

    release, entered = threading.Event(), threading.Event()

    def held_solve(**_: object) -> dict[str, str]:
        entered.set()
        release.wait(20)  # inline on the event loop, nothing else would answer meanwhile
        return {"held": "yes"}

    monkeypatch.setattr(api, "solve_document", held_solve)
    answers: list[int] = []
    body = {"model": "central", "k": 100, "eps1": 1, "eps2": 0.5, "n1": 500, "n2": 500}
    solving = threading.Thread(
        target=lambda: answers.append(idle_client.post("/v1/solve", json=body).status_code)
    )
    solving.start()
    assert entered.wait(10)
    started = time.monotonic()
    assert idle_client.get("/v1/health").status_code == 200
    plan = idle_client.post(
        "/v1/plan", json={"model": "central", "k": 64, "alpha": 0.3, "eps1": 1, "eps2": 0.5}
    )
    waited = time.monotonic() - started
    release.set()
    solving.join(30)
    assert plan.status_code == 200 and answers == [200]
    assert waited < 10, f"health and a plan waited {waited:.1f} s for the solve"


def _hold_compute_threads(client, monkeypatch, release):
    """Fill every compute thread with a solve that waits for ``release``; the threads."""
    import threading

    from planner import api
    from planner.service.limits import COMPUTE_THREADS

    entered: list[int] = []
    counting = threading.Lock()

    def held_solve(**_: object) -> dict[str, str]:
        with counting:
            entered.append(1)
        release.wait(30)
        return {"held": "yes"}

    monkeypatch.setattr(api, "solve_document", held_solve)
    body = {"model": "central", "k": 100, "eps1": 1, "eps2": 0.5, "n2": 500}
    solving = [
        threading.Thread(
            target=client.post, args=("/v1/solve",), kwargs={"json": body | {"n1": 500 + i}}
        )
        for i in range(COMPUTE_THREADS)  # distinct: none answered from the cache
    ]
    for thread in solving:
        thread.start()
    deadline = time.monotonic() + 15
    while len(entered) < COMPUTE_THREADS and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(entered) == COMPUTE_THREADS
    return solving


def test_held_answers_leave_the_job_routes_their_threads(idle_client, monkeypatch) -> None:
    """Answers once shared the default thread pool with the job routes: forty held solves
    filled its 40 threads and ``GET /v1/validations`` waited until one was done (up to the
    cap per request). Answers have threads of their own (``COMPUTE_THREADS``)."""
    import threading

    release = threading.Event()
    safety = threading.Timer(20.0, release.set)  # the old pool: the GET waits for this
    safety.start()
    solving: list[threading.Thread] = []
    try:
        solving = _hold_compute_threads(idle_client, monkeypatch, release)
        started = time.monotonic()
        listed = idle_client.get("/v1/validations", params={"limit": 1})
        waited = time.monotonic() - started
    finally:
        release.set()
        safety.cancel()
        for thread in solving:
            thread.join(30)
    assert listed.status_code == 200
    assert waited < 5, f"GET /v1/validations waited {waited:.1f} s for the held solves"


def test_a_sweep_waiting_for_a_thread_holds_no_sweep_slot(idle_client, monkeypatch) -> None:
    """A review: a sweep took its slot (``MAX_CONCURRENT_SWEEPS``) before waiting for a
    compute thread, so with every thread held, two waiting sweeps had a third refused (429
    "2 sweeps are being computed already") while none computed."""
    import threading

    release = threading.Event()
    safety = threading.Timer(20.0, release.set)
    safety.start()
    answers: list[int] = []
    sweep = {"k": 100, "alpha": 0.2, "eps1": 1, "eps2": "0.5,1"}
    sweeps = [
        threading.Thread(
            target=lambda: answers.append(idle_client.post("/v1/sweep", json=sweep).status_code)
        )
        for _ in range(3)
    ]
    solving: list[threading.Thread] = []
    try:
        solving = _hold_compute_threads(idle_client, monkeypatch, release)
        for thread in sweeps:
            thread.start()
        time.sleep(1.0)
        early = list(answers)
    finally:
        release.set()
        safety.cancel()
        for thread in [*solving, *sweeps]:
            thread.join(30)
    assert early == [], f"answered while every thread was held: {early}"
    assert len(answers) == 3 and all(status in (200, 429) for status in answers)


def test_the_wait_for_a_compute_thread_counts_towards_the_cap(tmp_path, monkeypatch) -> None:
    """A review: the cap per request (``request_time_limit``) started only once a compute
    thread took the answer, so with every thread held a plan waited the whole cap and then
    computed. Its wait counts now: past the cap it is a 503 naming the cap."""
    import threading

    app = create_app(tmp_path / "jobs.sqlite3", workers=1, run_jobs=False, request_time_limit=1.0)
    release = threading.Event()
    with TestClient(app) as client:
        safety = threading.Timer(20.0, release.set)
        safety.start()
        solving: list[threading.Thread] = []
        try:
            solving = _hold_compute_threads(client, monkeypatch, release)
            threading.Timer(2.0, release.set).start()  # the plan waits 2 s for a thread
            plan = client.post(
                "/v1/plan", json={"model": "central", "k": 64, "alpha": 0.3, "eps1": 1, "eps2": 0.4}
            )
        finally:
            release.set()
            safety.cancel()
            for thread in solving:
                thread.join(30)
    assert plan.status_code == 503, plan.text
    assert "ran past 1 s (its wait for a thread included)" in plan.json()["error"]


def test_a_full_queue_refuses_new_jobs_with_429(idle_client, monkeypatch) -> None:
    """A hostile review queued 300 jobs in a second (each may run 600 s); the queue holds at
    most MAX_QUEUED_JOBS waiting, then answers 429 with Retry-After and one line."""
    from concurrent.futures import ThreadPoolExecutor

    from planner.service.limits import MAX_QUEUED_JOBS

    store = idle_client.app.state.service.store
    counts = store.counts

    def slow_counts() -> dict[str, int]:  # widens the window between count and insert
        counted = counts()
        time.sleep(0.005)
        return counted

    monkeypatch.setattr(store, "counts", slow_counts)

    def submit(_: int) -> int:
        return idle_client.post("/v1/validations", json=SMALL_JOB).status_code

    # 8 at a time, as a fresh-user trial did: 103 had been queued (count, then insert)
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(submit, range(MAX_QUEUED_JOBS + 12)))
    assert codes.count(202) == MAX_QUEUED_JOBS and codes.count(429) == 12
    refused = idle_client.post("/v1/validations", json=SMALL_JOB)
    assert refused.status_code == 429 and refused.headers["retry-after"] == "60"
    assert f"at most {MAX_QUEUED_JOBS}" in refused.json()["error"]
    assert idle_client.get("/v1/health").json()["queued"] == MAX_QUEUED_JOBS


def test_the_page_answers_when_only_its_plot_is_over_a_cost_limit(idle_client) -> None:
    """ε = 1e-4 in every group: the compare table is answered (as by /v1/compare), while
    the plot's 25-value sweep over ε2 is over the shuffle noise-search limit; the page said
    422 for the whole query (a hostile review)."""
    query = {"k": "1000", "alpha": "0.1", "eps1": "0.0001", "eps2": "0.0001", "delta": "1e-6"}
    page = idle_client.get("/", params=query)
    assert page.status_code == 200
    assert "No plot for these inputs" in page.text and "sweep size" in page.text
    # every row answered: the shuffle ones run a local protocol, covered at any ε
    compared = idle_client.post("/v1/compare", json=query).json()
    assert _cells(page.text, "total") == [plan["total_users"] for plan in compared["plans"]]


def test_the_page_refuses_a_repeated_or_unknown_field_as_the_api_does(idle_client) -> None:
    """A review: ``&k=1000&k=50`` planned k = 50 (and Verify carried it), ``&bta=0.01`` was
    ignored and planned at β = 1/3; /v1/health took any parameter."""
    base = "/?setting=central&k=1000&alpha=0.1&eps1=1&eps2=0.25"
    twice = idle_client.get(base + "&k=50")
    assert twice.status_code == 422 and 'id="verify-box"' not in twice.text
    assert "must be given once (it appears twice)" in twice.text
    unknown = idle_client.get(base + "&bta=0.01")
    assert unknown.status_code == 422 and "invalid bta" in unknown.text
    assert idle_client.get(base).status_code == 200
    assert idle_client.get("/v1/health?bogus=1").status_code == 422
    # a review: an unknown setting had shown the compare table with no word of it
    for setting in ("bogus", "%00", "shuffle-public%2Bmessages"):
        wrong = idle_client.get(base.replace("setting=central", f"setting={setting}"))
        assert wrong.status_code == 422 and "invalid setting" in wrong.text, setting
        assert "must be one of compare, local-private" in wrong.text
    # a fresh-user trial: compare showed no sign that it ignored the allocation asked
    compared = "/?setting=compare&k=1000&alpha=0.1&eps1=1&eps2=0.25&allocation=fixed-n2&n2=60000"
    ignored = idle_client.get(compared)
    assert ignored.status_code == 422
    assert "invalid allocation = &#x27;fixed-n2&#x27;" in ignored.text
    # the group's asked ε stays in its heading beside the ε its tester runs at, as the CLI's
    central = idle_client.get("/?setting=central&k=1000&alpha=0.1&eps1=1&eps2=0.3")
    assert "group 1 (ε = 1, run at 0.3)" in central.text and "group 2 (ε = 0.3)" in central.text


def _form_values(html: str) -> dict[str, str]:
    """The form's fields as the page shows them (inputs' values, selects' chosen options)."""
    from html import unescape

    values = {}
    for name, value in re.findall(r'<input id="([a-z0-9]+)" name="\1" value="([^"]*)"', html):
        values[name] = unescape(value)
    for name, options in re.findall(r'<select id="([a-z]+)" name="\1"[^>]*>(.*?)</select>', html):
        chosen = re.search(r'<option value="([^"]*)" selected>', options)
        values[name] = unescape(chosen.group(1)) if chosen else ""
    return values


def _permalink(html: str) -> str:
    from html import unescape

    match = re.search(r'<a href="([^"]*)" id="permalink">', html)
    assert match is not None
    return unescape(match.group(1))


def test_every_field_error_is_shown_at_once(idle_client) -> None:
    """k = 2.5, α = 1.5 and ε2 = −1 flagged only k (a new user's trial): each bad field is
    marked, each with the line naming it and its range, and nothing is planned."""
    query = {"setting": "central", "k": "2.5", "alpha": "1.5", "eps1": "1", "eps2": "-1"}
    page = idle_client.get("/", params=query)
    assert page.status_code == 422
    shown = {
        name: line.replace("&#x27;", "'")
        for name, line in re.findall(
            r'<p class="error" id="([a-z0-9]+)-error" role="alert">([^<]*)</p>', page.text
        )
    }
    assert shown == {
        "k": "invalid k = '2.5': must be an integer in [2, 1e+12]",
        "alpha": "invalid alpha = '1.5': must be a number in [1e-06, 1]",
        "eps2": "invalid eps2 = '-1': must be a number in [0.0001, 20]",
    }
    assert page.text.count('aria-invalid="true"') == 3
    assert 'id="verify-box"' not in page.text and "<svg" not in page.text
    # each line is the API's (and the CLI's) for that field alone
    for name, line in shown.items():
        alone = idle_client.post(
            "/v1/plan", json={**SHUFFLE, "model": "central", name: query[name]}
        )
        assert alone.json()["error"].replace('"', "'") == line
    # a cost and an n2 given without their allocation are marked together too
    both = idle_client.get("/", params={**query, "k": "100", "cost1": "2", "n2": "50"})
    assert {"alpha-error", "eps2-error", "cost1-error", "n2-error"} <= set(
        re.findall(r'id="([a-z0-9]+-error)"', both.text)
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("setting", "shuffle-public"),
        ("setting", "compare"),
        ("k", "2000"),
        ("alpha", "0.2"),
        ("eps1", "0.8"),
        ("eps2", "0.3"),
        ("delta", ""),  # the permalink dropped it, and reopening it gave δ = 1e-6
        ("delta", "1e-7"),
        ("beta", "0.05"),
        ("beta", ""),
        ("allocation", "cost"),
        ("cost1", "2"),
        ("cost2", ""),
        ("n2", "60000"),
        ("k", "<script>alert(1)</script>"),
        ("alpha", "\"'><b>&amp;"),
    ],
)
def test_the_permalink_reproduces_the_page(idle_client, name, value) -> None:
    """Every field, a blank one too, comes back from the permalink as it was."""
    base = {"setting": "shuffle-private", "k": "1000", "alpha": "0.1", "eps1": "1"}
    base |= {"eps2": "0.25", "delta": "1e-6", "beta": "", "allocation": "fewest"}
    base |= {"cost1": "1", "cost2": "1", "n2": ""}
    first = idle_client.get("/", params={**base, name: value})
    shown = _form_values(first.text)
    assert shown[name] == value
    again = idle_client.get(_permalink(first.text))
    assert _form_values(again.text) == shown
    assert again.status_code == first.status_code
    assert again.text == first.text  # the very page
    assert "<script>alert" not in first.text and "<b>&amp;" not in first.text


def test_the_page_words_warnings_for_the_page_and_offers_their_choices(idle_client, capsys):
    """The plan's warnings named CLI flags (--allocation paper, --simulation-budget): the
    page names its own controls and links to the plan each choice gives, while the CLI's
    lines stay as they are."""
    query = {"setting": "shuffle-public", "k": "1000", "alpha": "0.8", "eps1": "0.05"}
    query |= {"eps2": "1", "delta": "1e-6", "beta": "0.01", "allocation": "paper"}
    page = idle_client.get("/", params=query)
    assert page.status_code == 200
    warnings = re.search(r'<ul class="warnings">(.*?)</ul>', page.text, re.DOTALL)
    assert warnings is not None and "--" not in warnings.group(1)
    assert "Allocation “fewest”" in warnings.group(1)
    links = re.findall(r'<a class="action" href="([^"]*)">([^<]*)</a>', warnings.group(1))
    assert ("Plan with allocation fewest") in [label for _, label in links]
    href = next(href for href, label in links if label == "Plan with allocation fewest")
    assert idle_client.get(href.replace("&amp;", "&")).status_code == 200
    cli = ["plan", "--model", "shuffle", "--coin", "public", "-k", "1000", "--alpha", "0.8"]
    cli += ["--eps1", "0.05", "--eps2", "1", "--delta", "1e-6", "--beta", "0.01"]
    document = cli_json([*cli, "--allocation", "paper", "--json"], capsys)
    assert any("--allocation fewest" in line for line in document["warnings"])  # unchanged

    # outside the covered region: no --simulation-budget, a button that starts the job
    # k = 12: below every paper protocol's covered k (16), and α = 0.005 below every
    # protocol's covered α (so the 16-bin domain, which k = 12 may run on, is not covered)
    outside = {"setting": "shuffle-public", "k": "12", "alpha": "0.005", "eps1": "1"}
    outside |= {"eps2": "0.05", "delta": "1e-6", "allocation": "paper"}
    refused = idle_client.get("/", params=outside)
    assert refused.status_code == 422 and "not covered" in refused.text
    assert "--simulation-budget" not in refused.text and "Simulate this query" in refused.text
    box = re.search(r'id="simulate-box" data-query="([^"]*)"', refused.text)
    assert box is not None
    from html import unescape

    job = json.loads(unescape(box.group(1)))
    assert job["kind"] == "plan" and job["model"] == "shuffle" and job["coin"] == "public"
    started = idle_client.post("/v1/validations", json=job)  # what the button sends
    assert started.status_code == 202 and started.json()["kind"] == "plan"
    # a compare row that is not covered links to its setting's page (which simulates it)
    wide = {"k": "10000000", "alpha": "0.1", "eps1": "1", "eps2": "0.25", "delta": "1e-6"}
    compared = idle_client.get("/", params=wide)
    assert "not covered" in compared.text
    # (at k = 10⁷ a simulation is beyond any budget: the row says its page refuses it)
    assert "beyond any budget (at most 3,600 s): its own page refuses it" in compared.text
    assert "planner plan" not in compared.text
    assert re.search(r'<th scope="row"><a href="/\?setting=central&amp;k=10000000', compared.text)


def test_the_page_rounds_every_number_as_the_cli_table(client, capsys) -> None:
    """0.236 on the page against 0.237 in the CLI's table: the page formats with the CLI's
    own functions (a validation's bounds rounded outwards, large numbers with commas)."""
    from planner.report import number_text, rate_text

    query = {"setting": "shuffle-private", "k": "100000", "alpha": "0.05", "eps1": "1"}
    query |= {"eps2": "0.05", "delta": "1e-6"}
    page = client.get("/", params=query)
    document = client.post(
        "/v1/plan", json={**{n: v for n, v in query.items() if n != "setting"}, "model": "shuffle"}
    ).json()
    for field, key in (("lower", "lower_bound"), ("mu", "noise_mu")):
        cells = re.findall(rf'data-field="{field}"[^>]*>([^<]*)<', page.text)
        assert cells == [number_text(group[key]) for group in document["groups"]]
    started = client.post("/v1/validations", json=SMALL_JOB).json()
    job = wait_for(client, started["id"])
    assert job["status"] == "done", job["error"]
    fragment = client.get(f"/jobs/{job['id']}")
    assert fragment.status_code == 200
    rows = re.findall(r"<tr>(.*?)</tr>", fragment.text)[1:]
    applicable = [family for family in job["report"]["families"] if family["applicable"]]
    assert applicable
    for family in applicable:
        row = next(row for row in rows if f"<td>{family['family']}</td>" in row)
        low, high = family["confidence_bounds"]
        assert f"<td>{rate_text(family['error_rate'])}</td>" in row
        assert f"<td>[{rate_text(low, 'down')}, {rate_text(high, 'up')}]</td>" in row
    assert client.get("/jobs/" + "0" * 32).status_code == 404
    assert client.get("/jobs/nope").status_code == 404


def test_the_token_page_is_styled_and_says_when_a_token_is_wrong(tmp_path) -> None:
    token = "s3cret-token-0123456789"
    app = create_app(tmp_path / "login.sqlite3", token=token, run_jobs=False)
    with TestClient(app) as client:
        first = client.get("/?k=500")
        assert first.status_code == 401
        assert '<link rel="stylesheet" href="/static/calculator.css">' in first.text
        assert 'id="token-error"' not in first.text
        assert '<input type="hidden" name="k" value="500">' in first.text  # kept for after
        wrong = client.get("/?token=not-the-token&k=500", follow_redirects=False)
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
        assert 'id="token-error"' in wrong.text and "not this server&#x27;s token" in wrong.text
        hostile = client.get('/?token=x&k="><script>alert(1)</script>')
        assert hostile.status_code == 401 and "<script>alert" not in hostile.text
        client.cookies.set("planner_token", "an-old-token-0123456789")
        stale = client.get("/")
        assert stale.status_code == 401 and "no longer this server" in stale.text
        client.cookies.clear()
        good = client.get(f"/?token={token}&k=500", follow_redirects=False)
        assert good.status_code == 303 and good.headers["location"] == "/?k=500"


def test_docs_is_swagger_ui_served_offline_with_markdown_descriptions(idle_client) -> None:
    docs = idle_client.get("/docs")
    assert docs.status_code == 200 and "SwaggerUIBundle" in docs.text
    assert "http" not in docs.text and "cdn" not in docs.text.lower()  # nothing off this server
    for asset in re.findall(r'(?:href|src)="(/docs/assets/[^"]+)"', docs.text):
        fetched = idle_client.get(asset)
        assert fetched.status_code == 200 and len(fetched.content) > 1000
    assert len(re.findall(r"/docs/assets/", docs.text)) == 3
    assert idle_client.get("/docs/assets/..%2Fcore.py").status_code == 404
    spec = idle_client.get("/openapi.json").text
    assert "``" not in spec and "`planner plan --json`" in spec
