"""The web calculator at ``/``: a server-rendered form, its plan table, a figure, job buttons.

The query lives in the URL (``/?setting=central&k=1000&…``), so every page is its own
permalink (every field, blank ones too). Every bad field is shown at once beside that
field with the CLI's one-line message; the planner's lines name the page's controls, not
the CLI's options. The only script (``/static/calculator.js``) starts and follows a job
(verify a plan, simulate a query outside the covered region) and marks tables wider than
the screen; the page works without it and without any network but this server's.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import threading
import time
from collections.abc import Callable
from html import escape
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from planner import api
from planner.allocation import COST_MAX, COST_MIN, AllocationRule
from planner.api import DeadlineExceededError, check_deadline, deadline
from planner.coverage import OWN_DOMAIN_UNCOVERED
from planner.inputs import (
    DEFAULT_BETA,
    K_MAX,
    InputError,
    Query,
    beta_text,
    check_alpha,
    check_beta,
    check_choice,
    check_delta,
    check_eps,
    check_integer,
    check_number,
)
from planner.report import (
    eps_heading,
    messages_per_user_text,
    messages_text,
    multiplier_text,
    rate_text,
    total_text,
)
from planner.report import number_text as _number
from planner.service.auth import COOKIE, authorized, token_matches
from planner.service.routes import first_repeat, only_with_their_allocation
from planner.service.svgplot import eps2_values, users_against_eps2

router = APIRouter(include_in_schema=False)

SETTINGS = ("compare", *api.SETTING_KEYS, *api.MIXED_SETTING_KEYS)
DEFAULTS = {
    "setting": "compare",
    "k": "1000",
    "alpha": "0.1",
    "eps1": "1",
    "eps2": "0.25",
    "delta": "1e-6",
    "beta": "",
    "allocation": "fewest",
    "cost1": "1",
    "cost2": "1",
    "n2": "",
}
LABELS = {
    "setting": "Setting",
    "k": "Domain size k",
    "alpha": "Distance α (TV)",
    "eps1": "Group 1's ε1",
    "eps2": "Group 2's ε2",
    "delta": "δ (shuffle only)",
    "beta": "Target error β",
    "allocation": "Allocation",
    "cost1": "Cost per group-1 user",
    "cost2": "Cost per group-2 user",
    "n2": "Group 2's size (fixed-n2)",
}
HINTS = {
    "k": "integer in [2, 10¹²]",
    "alpha": "in [1e-06, 1]",
    "eps1": "in [0.0001, 20]",
    "eps2": "in [0.0001, 20]",
    "delta": "in [1e-12, 1); blank: local and central only",
    "beta": "in (0, 0.5); blank: 1/3",
}
FIELD_OF = {"model": "setting", "coin": "setting", "setting": "setting", "unknown": "n2"}
MAX_FIELD = 40


def _form(request: Request) -> dict[str, str]:
    given = request.query_params
    values = {name: given.get(name, default)[:MAX_FIELD] for name, default in DEFAULTS.items()}
    if values["setting"] not in SETTINGS:
        values["setting"] = "compare"
    return values


def _form_problem(request: Request) -> InputError | None:
    """A field named twice, a name that is no field of the form (``?bta=0.01`` would
    plan at the default β) or a setting the form does not offer, in the line the API
    gives; None when there is none."""
    names = [name for name, _ in request.query_params.multi_items() if name != "token"]
    twice = first_repeat(names)
    for name in names:
        if name == twice:
            return InputError(name, request.query_params[name], "given once (it appears twice)")
        if name not in DEFAULTS:
            fields = ", ".join(DEFAULTS)
            allowed = f"left out (the form's fields are {fields})"
            return InputError(name, request.query_params[name], allowed)
    asked = request.query_params.get("setting")
    if asked is not None and asked[:MAX_FIELD] not in SETTINGS:
        # a review: ?setting=bogus had shown the compare table with no word of it
        return InputError("setting", asked[:MAX_FIELD], f"one of {', '.join(SETTINGS)}")
    return None


def _needs_delta(setting: str) -> bool:
    """Whether the page's setting (a key, or "compare") is a protocol that takes δ. The
    form's δ, filled in by default, is the shuffle model's alone: a central plan on the
    page stays pure ε-DP (a central query that gives δ may run a shuffle protocol: the
    command line, the API and HTTP ask it so)."""
    return api.asked_needs_delta(setting)


OPTIONAL = ("delta", "beta", "cost1", "cost2", "n2")
"""Fields left blank to mean "not given" (checked only when filled in)."""
CHECKS: dict[str, Callable[[str], object]] = {
    "k": lambda value: check_integer("k", value, 2, K_MAX),
    "alpha": check_alpha,
    "eps1": lambda value: check_eps("eps1", value),
    "eps2": lambda value: check_eps("eps2", value),
    "delta": check_delta,
    "beta": check_beta,
    "allocation": lambda value: check_choice("allocation", value, AllocationRule),
    "cost1": lambda value: check_number(
        "cost1", value, COST_MIN, COST_MAX, low_open=False, high_open=False
    ),
    "cost2": lambda value: check_number(
        "cost2", value, COST_MIN, COST_MAX, low_open=False, high_open=False
    ),
    "n2": lambda value: check_integer("n2", value, 1),
}
"""Each field's own check, the one the API makes (so its line is the CLI's)."""


def _field_errors(values: dict[str, str]) -> dict[str, str]:
    """Every field's own error at once (k = 2.5, α = 1.5 and ε2 = −1: three lines), each
    the line the API would give for that field alone; {} when every field is good."""
    errors: dict[str, str] = {}
    setting = values["setting"]
    with_delta = setting == "compare" or _needs_delta(setting)
    for name, check in CHECKS.items():
        value = values[name]
        if (name in OPTIONAL and value == "") or (name == "delta" and not with_delta):
            continue
        try:
            check(value)
        except InputError as error:
            errors[name] = str(error)
    if setting == "compare":
        for name in ("allocation", "cost1", "cost2", "n2"):  # compare would ignore them
            if name not in errors and values[name] not in ("", DEFAULTS[name]):
                errors[name] = str(
                    InputError(
                        name,
                        values[name],
                        f"left at {DEFAULTS[name] or 'blank'} when comparing every setting "
                        "(choose one setting to allocate its users)",
                    )
                )
    else:
        fields = {name: values[name] or None for name in ("allocation", "cost1", "cost2", "n2")}
        given = {name for name in ("cost1", "cost2", "n2") if values[name]}
        for name in ("cost1", "cost2", "n2"):  # as POST /v1/plan: Verify would refuse them
            if name in errors or name not in given:
                continue
            try:
                only_with_their_allocation(fields, {name})
            except InputError as error:
                errors[error.parameter] = str(error)
    return errors


PAGE_PHRASES = (
    (
        re.compile(r"simulating it is off \(a budget of 0 s: --simulation-budget\)"),
        "the page does not simulate while it answers: “Simulate this query” runs it as a job",
    ),
    (
        re.compile(r"\(about ([0-9,]+) s; --simulation-budget, or a plan job in the service\)"),
        lambda match: (
            f"(about {match[1]} s of simulation: “Simulate this query” below runs it)"
            if float(match[1].replace(",", "")) <= api.DEFAULT_SIMULATION_BUDGET
            else f"(about {match[1]} s of simulation, more than a plan job may take: not offered)"
        ),
    ),
    (
        re.compile(r"above the ([0-9.]+) s budget \(--simulation-budget\)"),
        r"above the \1 s a plan job may simulate: not offered",
    ),
    (
        re.compile(r"\(planner plan simulates it within its budget\)"),
        "(its own page simulates it within its budget)",
    ),
    (
        re.compile(
            r"above planner plan's default [0-9.]+ s budget: --simulation-budget, or a plan job"
        ),
        "too long for its own page: a plan job runs it",
    ),
    (re.compile(r"planner plan refuses it"), "its own page refuses it"),
    (re.compile(r"planner validate\b"), "“Verify this plan”"),
    (re.compile(r"planner plan\b"), "this page"),
)
"""The CLI's words in the planner's lines, as the page says them (its controls' names)."""
CLI_OPTION = re.compile(r"--([a-z][a-z0-9-]*)(?: ([A-Za-z0-9.+-]*[A-Za-z0-9]))?")


def page_words(line: str, values: dict[str, str] | None = None) -> str:
    """A line of the planner's (a warning, a reason, an error) as HTML for the page: every
    CLI option named as the page's control (``--allocation paper``: Allocation “paper”),
    and, where ``values`` (the page's form) is given, a link that plans the query with
    that control set (the CLI's own lines are unchanged)."""
    actions: list[tuple[str, dict[str, str]]] = []
    for pattern, words in PAGE_PHRASES:
        line = pattern.sub(words, line)

    def option(match: re.Match[str]) -> str:
        name, value = match[1], match[2]
        field = name.replace("-", "_")
        label = LABELS.get(field, name)
        if field == "allocation" and value in ("fewest", "paper", "cost"):
            reset = {} if value == "cost" else {"cost1": "1", "cost2": "1", "n2": ""}
            actions.append((f"Plan with allocation {value}", {"allocation": value, **reset}))
            return f"{label} “{value}”"
        if field == "k" and value is not None:
            actions.append((f"Plan at k = {value}", {"k": value}))
            return f"{label} = {value}"
        if field not in LABELS:  # a flag of the CLI's own (--exact): its name, in words
            return name + ("" if value is None else f" {value}")
        return f"{label} “{value}”" if value is not None else label

    line = CLI_OPTION.sub(option, line)
    links = ""
    if values is not None and values.get("setting") != "compare":
        shown = dict.fromkeys(label for label, _ in actions)
        for label in shown:
            change = next(change for name, change in actions if name == label)
            href = "/?" + urlencode({**values, **change})
            links += f' <a class="action" href="{escape(href, quote=True)}">{escape(label)}</a>'
    return escape(line) + links


def _inputs(values: dict[str, str]) -> dict[str, Any]:
    """The query's fields as the API takes them (blank: not given)."""
    inputs: dict[str, Any] = {name: values[name] for name in ("k", "alpha", "eps1", "eps2")}
    # the form's δ (filled in by default) is the shuffle model's alone: a local plan would
    # only warn that it is ignored, and a central one must not spend it unasked
    with_delta = values["setting"] == "compare" or _needs_delta(values["setting"])
    inputs["delta"] = (values["delta"] or None) if with_delta else None
    inputs["beta"] = values["beta"] or 1 / 3
    return inputs


def _count(value: Any) -> str:
    return "—" if value is None else f"{int(value):,}"


def _plan_section(document: dict[str, Any], values: dict[str, str] | None = None) -> str:
    groups = document["groups"]
    inputs = document["inputs"]
    mixed = "," in inputs["model"]  # each group's model heads its column, as on the CLI
    head = "".join(
        f'<th scope="col">{escape(g["name"])} ({escape(g["model"]) + ", " if mixed else ""}'
        f"{eps_heading(inputs['eps1' if g['name'] == 'group 1' else 'eps2'], g['eps'])})</th>"
        for g in groups
    )
    rows = [
        ("users needed", [_count(g["n_users"]) for g in groups], "users"),
        ("homogeneous baseline", [_count(g["baseline_n_users"]) for g in groups], "baseline"),
        (
            "saving vs baseline",
            [f"{g['saving_users']:,} ({g['saving_fraction']:+.1%})" for g in groups],
            "saving",
        ),
        ("total n1 + n2", _total_cells(document), "total-users"),
        ("lower bound (C = 1)", [_number(g["lower_bound"]) for g in groups], "lower"),
    ]
    if any(g["noise_mu"] is not None for g in groups):
        rows.append(("noise μ per bin", [_number(g["noise_mu"]) for g in groups], "mu"))
    if any(g["messages_per_user"] is not None for g in groups):
        rows.append(
            (
                "messages per user",
                [
                    "—"
                    if g["messages_per_user"] is None
                    else messages_per_user_text(g["messages_per_user"])
                    for g in groups
                ],
                "messages",
            )
        )
    body = "".join(
        f'<tr><th scope="row">{label}</th>'
        + "".join(
            f'<td data-field="{key}" data-group="{index + 1}">{cell}</td>'
            for index, cell in enumerate(cells)
        )
        + "</tr>"
        for label, cells, key in rows
    )
    constant = document["constant"]
    notes = [
        f'<li>protocol <b data-field="protocol">{escape(document["protocol"])}</b>, theorem '
        f'<code data-field="theorem">{escape(document["bound"]["reference"])}</code>, dominant '
        f"term {escape(document['bound']['dominant_term'])}</li>",
        *(
            (f'<li>mechanism: <span data-field="mechanism">{escape(mechanism)}</span></li>',)
            if (mechanism := document.get("mechanism"))
            else ()
        ),
        f'<li>constant: <b data-field="constant">{escape(constant["source"])}</b> '
        f"(C = {multiplier_text(constant['multiplier'])}, {escape(constant['version'])})</li>",
        f'<li>total users <b data-field="total">{_count(document["total_users"])}</b></li>',
    ]
    if "coverage" in document:
        notes.append(
            f'<li>coverage: <b data-field="coverage">{escape(str(document["coverage"]))}</b></li>'
        )
    allocation = document.get("allocation")  # always feasible: an infeasible one is a 422
    if allocation is not None:
        notes.append(
            f"<li>allocation {escape(allocation['rule'])}: n1 = "
            f'<b data-field="alloc-n1">{_count(allocation["n_users_group1"])}</b>, n2 = '
            f'<b data-field="alloc-n2">{_count(allocation["n_users_group2"])}</b> '
            f"({page_words(allocation['reason'], values)})</li>"
        )
    warnings = "".join(f"<li>{page_words(w, values)}</li>" for w in document["warnings"])
    return (
        f'<h2 id="result">{escape(document["setting"])}</h2>'
        '<div class="scroll"><table id="plan-table"><thead><tr><td></td>'
        f"{head}</tr></thead><tbody>{body}</tbody></table></div>"
        f'<ul class="notes">{"".join(notes)}</ul>'
        + (f'<h3>Warnings</h3><ul class="warnings">{warnings}</ul>' if warnings else "")
    )


def _total_cells(document: dict[str, Any]) -> list[str]:
    """The total row: n1 + n2, and the homogeneous baseline's total with the saving (as
    the CLI's table shows it, ``planner.report.total_cells``)."""
    return total_text(int(document["total_users"]), int(document["baseline"]["total_users"]))


def _setting_cell(
    setting: str, values: dict[str, str], protocol: str | None = None, link: bool = True
) -> str:
    """A compare row's name: a link that plans that setting, or for a mechanism alone
    (``local-private+k-rr``, which the form does not offer) or a setting's own protocol
    beside its plan (the form plans the setting, which runs the other) text; the protocol
    a setting's plan runs instead on a line of its own ("runs …", the CLI's
    ``compare_label``: on one line the table overflowed a 1,200-pixel window)."""
    name = escape(setting)
    if "+" not in setting and link:
        address = "/?" + urlencode({**values, "setting": setting})
        name = f'<a href="{escape(address)}">{name}</a>'
    if protocol is not None and protocol != setting:
        name += f'<br><span class="note">runs {escape(protocol)}</span>'
    return name


def _compare_messages(groups: list[dict[str, Any]]) -> str:
    """A compare row's messages per user, as the CLI's column shows them."""
    return messages_text([g["messages_per_user"] for g in groups], [g["model"] for g in groups])


def _compare_section(document: dict[str, Any], values: dict[str, str]) -> str:
    rows = []
    linked: set[str] = set()
    for item in document["plans"]:
        setting = item["setting"]
        # a setting's plan comes first (fewest users); its own protocol alone, after it
        cell = _setting_cell(setting, values, item["protocol"], setting not in linked)
        linked.add(setting)
        groups = item["groups"]
        rows.append(
            f'<tr data-setting="{escape(setting)}" data-protocol="{escape(item["protocol"])}">'
            f'<th scope="row">{cell}</th>'
            f'<td data-field="users" data-group="1">{_count(item["n_users_group1"])}</td>'
            f'<td data-field="users" data-group="2">{_count(item["n_users_group2"])}</td>'
            f'<td data-field="total">{_count(item["total_users"])}</td>'
            f'<td data-field="baseline">{_count(item["baseline"]["total_users"])}</td>'
            f'<td data-field="messages">{escape(_compare_messages(groups))}</td>'
            f"<td><code>{escape(item['bound']['reference'])}</code></td></tr>"
        )
    for item in document.get("not_covered", []):
        rows.append(
            f'<tr data-setting="{escape(item["setting"])}"><th scope="row">'
            f"{_setting_cell(item['setting'], values)}</th>"
            f'<td colspan="6" class="note">not covered: {page_words(item["reason"])}</td></tr>'
        )
    # each setting's lines under its name, in the plans' order (its links plan that setting)
    warnings = []
    for item in document["plans"]:
        own = {**values, "setting": item["setting"]}
        warnings += [f"{escape(item['setting'])}: {page_words(w, own)}" for w in item["warnings"]]
    warning_list = "".join(f"<li>{w}</li>" for w in warnings)
    return (
        '<h2 id="result">All settings, fewest users first</h2>'
        '<div class="scroll"><table id="compare-table"><thead><tr><th scope="col">setting</th>'
        '<th scope="col">group 1</th><th scope="col">group 2</th><th scope="col">total</th>'
        '<th scope="col">baseline total</th>'
        '<th scope="col" title="each user\'s messages: group 1 / group 2">messages</th>'
        '<th scope="col">theorem</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        + (f'<h3>Warnings</h3><ul class="warnings">{warning_list}</ul>' if warnings else "")
        + '<p class="note">Each setting with its default split (the fewest users in all),'
        + " sized by the calibrated constants (compare simulates nothing);"
        + " choose a setting (its link) for another allocation or to verify its plan."
        + ("" if values["delta"] else " Shuffle settings left out: give δ to include them.")
        + "</p>"
    )


def _job_query(values: dict[str, str]) -> dict[str, str]:
    """The page's query as a job's request (``POST /v1/validations``)."""
    model, _, coin = values["setting"].partition("-")
    query = {
        "model": model,
        "coin": coin or "private",
        **{name: values[name] for name in ("k", "alpha", "eps1", "eps2")},
        "allocation": values["allocation"],
    }
    if values["delta"] and _needs_delta(values["setting"]):
        query["delta"] = values["delta"]
    if values["beta"]:
        query["beta"] = values["beta"]
    return query


def _job_box(name: str, query: dict[str, Any], controls: str, button: str) -> str:
    """A job's button, progress bar, status line, link and result (calculator.js runs it)."""
    data = escape(json.dumps(query), quote=True)
    return (
        f'<div class="row job" id="{name}-box" data-query="{data}" data-name="{name}">'
        f'{controls}<button type="button" id="{name}-button">{button}</button></div>'
        f'<progress id="{name}-progress" max="1" value="0" '
        f'aria-label="{name} progress" hidden></progress>'
        f'<p id="{name}-status" role="status" aria-live="polite"></p>'
        f'<p id="{name}-link" class="note" hidden></p>'
        f'<div id="{name}-result"></div>'
    )


def _verify_section(values: dict[str, str]) -> str:
    query = {
        **_job_query(values),
        "cost1": values["cost1"] or "1",
        "cost2": values["cost2"] or "1",
    }
    if values["n2"]:
        query["n2"] = values["n2"]
    controls = (
        '<label for="trials">Trials per family</label>'
        '<input id="trials" name="trials" value="auto" size="6">'
        '<label for="seed">Seed</label>'
        '<input id="seed" name="seed" value="0" inputmode="numeric" size="6">'
    )
    return (
        '<section aria-labelledby="verify-heading" id="verify">'
        '<h2 id="verify-heading">Is the number real?</h2>'
        "<p>Runs the real private tester on every instance family (Monte Carlo, seeded) in a "
        "background job.</p>"
        + _job_box("verify", query, controls, "Verify this plan")
        + "</section>"
    )


def _simulate_section(values: dict[str, str], runs: str | None = None) -> str:
    """For a query outside the covered region: a button that starts the job simulating
    it (a job of kind plan, what ``planner plan`` does within its simulation budget).
    ``runs``: what the covered plan above runs instead ("on a larger domain", "another
    protocol"), where the query's own tester could be simulated (the job keeps whichever
    plan needs fewer users); offered only where that simulation fits the job's budget."""
    query = {**_job_query(values), "kind": "plan"}
    if runs is not None and _simulation_refusal(query, beside_covered=True) is not None:
        return ""  # the plan above stands; its line says what a simulation would take
    why = (
        f"The plan above runs {runs}; this query's own tester lies outside the covered "
        "region, and simulating it may need fewer users (the job keeps whichever plan needs "
        "fewer; "
        if runs is not None
        else "Outside the covered region the plan comes from simulating this query's own tester ("
    )
    return (
        '<section aria-labelledby="simulate-heading" id="simulate">'
        '<h2 id="simulate-heading">Simulate this query</h2>'
        f"<p>{why}up to {api.DEFAULT_SIMULATION_BUDGET:g} s of simulation, as the command "
        "line allows), in a background job.</p>"
        + _job_box("simulate", query, "", "Simulate this query")
        + "</section>"
    )


def _simulation_refusal(job: dict[str, Any], beside_covered: bool) -> InputError | None:
    """Why a plan job of the page's query would simulate nothing, or None: refused at
    submission as ``POST /v1/validations`` refuses it (``check_job``: k below the
    simulation floor, a simulation over the budget), or, ``beside_covered`` (a covered plan
    on a larger domain or of another protocol is shown), the query's own tester's
    simulation over the budget (the job keeps the covered plan)."""
    from planner.coverage import seconds_text, simulation_seconds
    from planner.service.limits import check_job
    from planner.service.models import ValidationRequest
    from planner.service.routes import power_as_beta

    try:
        request = ValidationRequest.model_validate(job)  # as POST /v1/validations reads it
        check_job(power_as_beta(request.model_dump(), request.model_fields_set), job.keys())
        if beside_covered:
            fields = ("model", "coin", "k", "alpha", "eps1", "eps2", "delta")
            query = Query.build(
                **{name: job.get(name) for name in fields}, beta=job.get("beta", DEFAULT_BETA)
            )
            needed = simulation_seconds(query, SIMULATION_TRIALS)
            if needed > api.DEFAULT_SIMULATION_BUDGET:
                budget = f"within {api.DEFAULT_SIMULATION_BUDGET:g} s"
                return InputError("simulation-budget", f"{seconds_text(needed)} s", budget)
    except InputError as error:
        return error
    except ValueError as error:  # pydantic's, for a value the job's request would refuse
        return InputError("query", str(error).splitlines()[0], "a valid plan job")
    return None


SIMULATION_TRIALS = 1000
"""Trials a family a plan job's simulation runs (``planner.coverage.covered_plan``'s)."""


def _field(name: str, values: dict[str, str], errors: dict[str, str]) -> str:
    """A form field, its hint and its error (``errors``: HTML lines, escaped already)."""
    error = errors.get(name)
    described = f' aria-describedby="{name}-hint{f" {name}-error" if error else ""}"'
    invalid = ' aria-invalid="true"' if error else ""
    label = f'<label for="{name}">{escape(LABELS[name])}</label>'
    if name in ("setting", "allocation"):
        options = SETTINGS if name == "setting" else ("fewest", "paper", "cost", "fixed-n2")
        shown = {"compare": "compare all settings"}
        control = (
            f'<select id="{name}" name="{name}"{described}{invalid}>'
            + "".join(
                f'<option value="{o}"{" selected" if values[name] == o else ""}>'
                f"{escape(shown.get(o, o))}</option>"
                for o in options
            )
            + "</select>"
        )
    else:
        mode = "numeric" if name in ("k", "n2") else "decimal"
        control = (
            f'<input id="{name}" name="{name}" value="{escape(values[name], quote=True)}" '
            f'inputmode="{mode}" autocomplete="off"{described}{invalid}>'
        )
    hint = f'<small id="{name}-hint">{escape(HINTS.get(name, ""))}</small>'
    message = f'<p class="error" id="{name}-error" role="alert">{error}</p>' if error else ""
    return f'<div class="field{" bad" if error else ""}">{label}{control}{hint}{message}</div>'


PAGE_BUSY_SECONDS = 5
"""``Retry-After`` of a page refused (429) because the plot's sweep is over the cap of
concurrent sweeps."""


def render(
    values: dict[str, str],
    problem: InputError | None = None,
    *,
    sweeps: threading.BoundedSemaphore | None = None,
    seconds: float | None = None,
    since: float | None = None,
) -> tuple[str, int]:
    """The page for these form values, and its HTTP status (422 when a field is bad, or
    with ``problem``, a line about the query string itself). Every bad field is marked at
    once, each with its own line, before anything is planned.

    ``seconds``: the service's cap per request (503 past it, with one line), counted from
    ``since`` (the request's arrival: its wait for a compute thread counts) or from now;
    ``sweeps``: the semaphore of concurrent sweeps the plot's sweep takes without waiting
    (429 and no plot while it is taken). A hostile review: the page ran its plans,
    compares and plot sweep with neither (a compare took 26 s and answered 200, where
    ``POST /v1/compare`` stops at 20 s)."""
    with deadline(seconds, since) if seconds is not None else contextlib.nullcontext():
        try:
            check_deadline()
            return _render(values, problem, sweeps)
        except DeadlineExceededError as error:
            line = (
                f"This query ran past {error.seconds:g} s, the service's cap per request, and "
                "was stopped (the command line has no cap)."
            )
            return _render(values, None, None, stopped=line)


def _render(
    values: dict[str, str],
    problem: InputError | None,
    sweeps: threading.BoundedSemaphore | None,
    *,
    stopped: str | None = None,
) -> tuple[str, int]:
    """:func:`render`'s page; ``stopped``: the line of a query stopped at the service's cap,
    shown above the form alone (503)."""
    errors: dict[str, str] = {}  # field (or "form") → its line, as HTML
    if stopped is not None:
        errors["form"] = escape(stopped)
    busy = False
    result = ""
    figure = ""
    simulate = ""
    inputs = _inputs(values)
    setting = values["setting"]
    try:
        if stopped is not None:
            raise _FieldErrorsShownError()
        if problem is not None:  # shown beside its field, or above the form
            raise problem
        errors = {name: page_words(line) for name, line in _field_errors(values).items()}
        if errors:
            raise _FieldErrorsShownError()
        if setting == "compare":
            document = api.compare_document(**inputs)
            result = _compare_section(document, values)
            chosen = None
        else:
            model, _, coin = setting.partition("-")
            try:
                document = api.plan_document(
                    model=model,
                    coin=coin or "private",
                    allocation=values["allocation"],
                    cost1=values["cost1"] or "1",
                    cost2=values["cost2"] or "1",
                    n2=values["n2"] or None,
                    simulation_budget=0,
                    **inputs,
                )
            except InputError as error:
                if hasattr(error, "gaps"):  # not covered: a job simulates it (the CLI would)
                    job = {**_job_query(values), "kind": "plan"}
                    refused = _simulation_refusal(job, beside_covered=False)
                    if refused is None:
                        simulate = _simulate_section(values)
                    elif hasattr(refused, "gaps"):  # a review: a job the service refused
                        raise refused from None  # its reason (over the budget), no job
                    else:  # refused for another reason (its allocation): said, no job
                        line = str(error).replace(getattr(error, "reason", ""), "")
                        error.args = (f"{line}a plan job would not simulate it ({refused})",)
                raise
            result = _plan_section(document, values) + _verify_section(values)
            if any(OWN_DOMAIN_UNCOVERED in line for line in document["warnings"]):
                point = document.get("tester_point") or {}
                runs = "on a larger domain" if point.get("k") is not None else "another protocol"
                simulate = _simulate_section(values, runs)
            chosen = [setting]
        eps1, eps2 = float(inputs["eps1"]), float(inputs["eps2"])  # checked by now
        try:
            if sweeps is not None and not sweeps.acquire(blocking=False):
                busy = True
                raise _SweepsBusyError()
            try:
                rows = api.sweep_result(
                    settings=chosen,
                    k=inputs["k"],
                    alpha=inputs["alpha"],
                    eps1=eps1,
                    eps2=eps2_values(eps1, eps2),
                    delta=inputs["delta"],
                    beta=inputs["beta"],
                ).rows()
            finally:
                if sweeps is not None:
                    sweeps.release()
            plot = users_against_eps2(rows, eps2)
        except _SweepsBusyError:
            plot = (
                '<p class="note" role="alert">No plot now: the server is computing as many '
                "sweeps as it computes at once; reload in a few seconds.</p>"
            )
        except InputError as refused:  # the plot's sweep over a cost limit: the plan stands
            if refused.parameter != "sweep size":
                raise
            plot = f'<p class="note">No plot for these inputs: {escape(str(refused))}.</p>'
        figure = (
            '<section aria-labelledby="plot-heading"><h2 id="plot-heading">Users against ε2'
            f"</h2>{plot}</section>"
        )
    except _FieldErrorsShownError:
        pass
    except InputError as error:
        field = FIELD_OF.get(error.parameter, error.parameter)
        errors[field if field in DEFAULTS else "form"] = page_words(str(error), values)
    except ArithmeticError:  # in range, but the numbers overflow (e.g. α = 1e-320)
        from planner.service.limits import ARITHMETIC_LINE

        errors["form"] = escape(ARITHMETIC_LINE)
    status = 503 if stopped else 422 if errors else 429 if busy else 200
    fields = "".join(_field(name, values, errors) for name in DEFAULTS)
    top = (
        f'<p class="error" role="alert" id="form-error">{errors["form"]}</p>'
        if "form" in errors
        else ""
    )
    return (
        PAGE.format(
            fields=fields,
            top=top,
            result=result + simulate,
            figure=figure,
            permalink=escape(permalink(values), quote=True),
        ),
        status,
    )


class _FieldErrorsShownError(Exception):
    """Every field's errors are found and shown: nothing to plan."""


class _SweepsBusyError(Exception):
    """The plot's sweep is over the cap of concurrent sweeps: the page has no plot."""


def permalink(values: dict[str, str]) -> str:
    """The page's own address: every field, a blank one too (blank δ means no δ, and left
    out it would come back as the default 1e-6), so reopening it gives this very page."""
    return "/?" + urlencode(values)


@router.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
async def calculator(request: Request) -> Response:
    """The calculator page (the query string is the permalink), rendered in the compute
    threads (``ServiceState.compute_threads``)."""
    token = request.query_params.get("token")
    expected = request.app.state.service.token
    rest = {name: value for name, value in request.query_params.items() if name != "token"}
    if token is not None and expected is not None:
        if not token_matches(token, expected):
            return HTMLResponse(login_page(rest, WRONG_TOKEN), status_code=401)
        response = RedirectResponse("/?" + urlencode(rest), status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response
    if not authorized(request):
        stale = STALE_TOKEN if request.cookies.get(COOKIE) else ""
        return HTMLResponse(login_page(rest, stale), status_code=401)
    state = request.app.state.service
    html, status = await state.in_compute_threads(
        functools.partial(
            render,
            _form(request),
            _form_problem(request),
            sweeps=state.sweeps,  # the API's own caps (a hostile review)
            seconds=state.request_seconds,
            since=time.monotonic(),
        )
    )
    headers = {"Retry-After": str(PAGE_BUSY_SECONDS)} if status == 429 else None
    return HTMLResponse(html, status_code=status, headers=headers)


WRONG_TOKEN = "That token is not this server's token: check it and enter it again."
STALE_TOKEN = "The token this browser kept is no longer this server's: enter the current one."


def login_page(query: dict[str, str], message: str = "") -> str:
    """The token page (styled as the calculator), with ``message`` when a token was wrong;
    the query asked for travels on in hidden fields (the form's own fields only)."""
    hidden = "".join(
        f'<input type="hidden" name="{name}" value="{escape(value[:MAX_FIELD], quote=True)}">'
        for name, value in query.items()
        if name in DEFAULTS
    )
    shown = (
        f'<p class="error" id="token-error" role="alert">{escape(message)}</p>' if message else ""
    )
    invalid = ' aria-invalid="true" aria-describedby="token-error"' if message else ""
    return LOGIN.format(hidden=hidden, message=shown, invalid=invalid)


def _validation_fragment(report: dict[str, Any]) -> str:
    """A validation job's report as the CLI's table shows it (its columns and rounding:
    error rates to 0.001, bounds rounded outwards)."""
    verdict = str(report.get("verdict") or ("pass" if report.get("passed") else "fail"))
    vote = report.get("vote_check")
    confidence = float(report.get("confidence") or 0.95)
    columns = ["family", "kind", "TV", "trials", *(["run error"] if vote else [])]
    columns += ["error", f"bounds (each {confidence:.0%} joint)", "verdict"]
    rows = []
    for family in report.get("families", []):
        if not family.get("applicable"):
            cells = [family["family"], family["kind"], *["—"] * (len(columns) - 3)]
            cells.append("n/a at this α")
        else:
            low, high = family["confidence_bounds"]
            shown = family["verdict"]
            cells = [
                family["family"],
                family["kind"],
                f"{family['tv']:.4g}",
                f"{family['trials']:,}",
                *([rate_text(family["run_error_rate"])] if vote else []),
                rate_text(family["error_rate"]),
                f"[{rate_text(low, 'down')}, {rate_text(high, 'up')}]",
                shown.upper() if shown == "fail" else shown,
            ]
        rows.append("<tr>" + "".join(f"<td>{escape(str(cell))}</td>" for cell in cells) + "</tr>")
    head = "".join(f'<th scope="col">{escape(name)}</th>' for name in columns)
    notes = [
        f"n1 = {report['n_users_group1']:,}, n2 = {report['n_users_group2']:,}, "
        f"≤ {report['trials']:,} trials/family, seed {report['seed']}, {report['path']} path, "
        f"target error ≤ {beta_text(report['target_error'], 6)}"
    ]
    if vote:
        notes.append(
            f"a majority vote of {vote['runs']} runs, checked through one run of "
            f"{vote['run_n_users_group1']:,} + {vote['run_n_users_group2']:,} users held to "
            f"error {vote['run_target_error']:.4g}: the error and its bounds are the vote's"
        )
    return (
        f'<p id="verdict" class="verdict-{escape(verdict)}">verdict: {escape(verdict.upper())}</p>'
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        + "".join(f'<p class="note">{escape(note)}</p>' for note in notes)
    )


@router.get("/jobs/{job_id}", response_class=HTMLResponse)
def job_fragment(job_id: str, request: Request) -> Response:
    """A finished job's report as HTML for the page (the script puts it under its
    button): a validation as the CLI's table, a simulated plan as the page's plan."""
    if not authorized(request):
        return HTMLResponse("the server's token is needed", status_code=401)
    lowered = job_id.lower()
    if len(lowered) != 32 or any(char not in "0123456789abcdef" for char in lowered):
        return HTMLResponse("no such job", status_code=404)
    job = request.app.state.service.store.get(lowered)
    if job is None:
        return HTMLResponse("no such job", status_code=404)
    if job.report is None:
        return HTMLResponse(f"job {escape(job.id)} is {escape(job.status.value)}", status_code=409)
    if job.kind == "validate":
        return HTMLResponse(_validation_fragment(job.report))
    return HTMLResponse(_plan_section(job.report))


STATIC_TYPES = {
    "calculator.js": "text/javascript; charset=utf-8",
    "calculator.css": "text/css; charset=utf-8",
}


@router.get("/static/{name}")
def static(name: str) -> Response:
    """The page's script and style sheet (packaged with the code: no CDN)."""
    if name not in STATIC_TYPES:
        return Response("not found", status_code=404, media_type="text/plain")
    text = resources.files("planner.service").joinpath(f"static/{name}").read_text("utf-8")
    return Response(text, media_type=STATIC_TYPES[name], headers={"Cache-Control": "max-age=300"})


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sample-size planner — heterogeneous privacy</title>
<link rel="stylesheet" href="/static/calculator.css"></head>
<body><header><h1>How many users must each group contribute?</h1>
<p class="note">Private closeness testing when group 1 and group 2 have different privacy
budgets ε1 and ε2 (local, shuffle or central DP).</p></header>
<main>
<form method="get" action="/" id="query" novalidate>{top}
<div class="grid">{fields}</div>
<div class="actions"><button type="submit" id="plan-button">Plan</button>
<a href="{permalink}" id="permalink">Permalink to this query</a>
<a href="/docs">API</a></div>
</form>
{result}
{figure}
</main>
<script src="/static/calculator.js" defer></script>
</body></html>
"""

LOGIN = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sample-size planner — token</title>
<link rel="stylesheet" href="/static/calculator.css"></head>
<body><header><h1>This planner needs its access token</h1>
<p class="note">Ask whoever runs this server for it. The browser keeps it (a cookie) once it
is right.</p></header>
<main><form method="get" action="/" id="login" novalidate>{message}{hidden}
<div class="field"><label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password"{invalid}></div>
<div class="actions"><button type="submit">Open the planner</button></div></form></main>
</body></html>
"""
