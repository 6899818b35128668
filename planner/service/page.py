"""The web calculator at ``/``: a server-rendered form, its plan table, a figure, a verify button.

The query lives in the URL (``/?setting=central&k=1000&…``), so every page is its own
permalink. A bad field is shown beside that field with the CLI's one-line message. The
only script (``/static/calculator.js``) starts and follows a verification job; the page
works without it and without any network but this server's.
"""

from __future__ import annotations

import json
from html import escape
from importlib import resources
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from planner import api
from planner.inputs import InputError
from planner.protocols import protocol_for
from planner.report import eps_heading
from planner.service.auth import COOKIE, authorized
from planner.service.routes import first_repeat, only_with_their_allocation
from planner.service.svgplot import eps2_values, users_against_eps2

router = APIRouter(include_in_schema=False)

SETTINGS = ("compare", *api.SETTING_KEYS)
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
    """A field named twice or a name that is no field of the form (``?bta=0.01`` would
    plan at the default β), in the line the API gives; None when there is none."""
    names = [name for name, _ in request.query_params.multi_items() if name != "token"]
    twice = first_repeat(names)
    for name in names:
        if name == twice:
            return InputError(name, request.query_params[name], "given once (it appears twice)")
        if name not in DEFAULTS:
            fields = ", ".join(DEFAULTS)
            allowed = f"left out (the form's fields are {fields})"
            return InputError(name, request.query_params[name], allowed)
    return None


def _needs_delta(setting: str) -> bool:
    """Whether the page's setting (a key, or "compare") is a protocol that takes δ."""
    return setting in api.SETTING_KEYS and protocol_for(setting).needs_delta


def _inputs(values: dict[str, str]) -> dict[str, Any]:
    """The query's fields as the API takes them (blank: not given)."""
    inputs: dict[str, Any] = {name: values[name] for name in ("k", "alpha", "eps1", "eps2")}
    # the form's δ (filled in by default) is the shuffle model's alone: a local or central
    # plan would only warn that it is ignored
    with_delta = values["setting"] == "compare" or _needs_delta(values["setting"])
    inputs["delta"] = (values["delta"] or None) if with_delta else None
    inputs["beta"] = values["beta"] or 1 / 3
    return inputs


def _count(value: Any) -> str:
    return "—" if value is None else f"{int(value):,}"


def _number(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}g}" if abs(value) < 1e6 else f"{value:.{digits}e}"


def _plan_section(document: dict[str, Any]) -> str:
    groups = document["groups"]
    inputs = document["inputs"]
    head = "".join(
        f'<th scope="col">{escape(g["name"])} '
        f"({eps_heading(inputs['eps1' if g['name'] == 'group 1' else 'eps2'], g['eps'])})</th>"
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
        rows.append(
            ("messages per user", [_number(g["messages_per_user"]) for g in groups], "messages")
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
        f'<li>constant: <b data-field="constant">{escape(constant["source"])}</b> '
        f"(C = {constant['multiplier']:.6g}, {escape(constant['version'])})</li>",
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
            f"({escape(allocation['reason'])})</li>"
        )
    warnings = "".join(f"<li>{escape(w)}</li>" for w in document["warnings"])
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
    total, baseline = document["total_users"], document["baseline"]["total_users"]
    saving = (baseline - total) / baseline if baseline else 0.0
    return [_count(total), f"baseline {_count(baseline)} ({saving:+.1%})"]


def _compare_section(document: dict[str, Any], permalink: dict[str, str]) -> str:
    rows = []
    for item in document["plans"]:
        link = "/?" + urlencode({**permalink, "setting": item["setting"]})
        rows.append(
            f'<tr data-setting="{escape(item["setting"])}">'
            f'<th scope="row"><a href="{escape(link)}">{escape(item["setting"])}</a></th>'
            f'<td data-field="users" data-group="1">{_count(item["n_users_group1"])}</td>'
            f'<td data-field="users" data-group="2">{_count(item["n_users_group2"])}</td>'
            f'<td data-field="total">{_count(item["total_users"])}</td>'
            f'<td data-field="baseline">{_count(item["baseline"]["total_users"])}</td>'
            f"<td>{escape(item['constant']['source'])}</td>"
            f"<td><code>{escape(item['bound']['reference'])}</code></td></tr>"
        )
    for item in document.get("not_covered", []):
        rows.append(
            f'<tr data-setting="{escape(item["setting"])}"><th scope="row">'
            f'{escape(item["setting"])}</th><td colspan="6" class="note">not covered: '
            f"{escape(item['reason'])}</td></tr>"
        )
    # each setting's lines under its name, in the plans' order
    warnings = []
    for item in document["plans"]:
        warnings += [f"{item['setting']}: {w}" for w in item["warnings"]]
    warning_list = "".join(f"<li>{escape(w)}</li>" for w in warnings)
    return (
        '<h2 id="result">All settings, fewest users first</h2>'
        '<div class="scroll"><table id="compare-table"><thead><tr><th scope="col">setting</th>'
        '<th scope="col">group 1</th><th scope="col">group 2</th><th scope="col">total</th>'
        '<th scope="col">baseline total</th><th scope="col">constant</th>'
        '<th scope="col">theorem</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        + (f'<h3>Warnings</h3><ul class="warnings">{warning_list}</ul>' if warnings else "")
        + '<p class="note">Each setting with its default split (the fewest users in all);'
        + " choose a setting (its link) for another allocation or to verify its plan."
        + ("" if "delta" in permalink else " Shuffle settings left out: give δ to include them.")
        + "</p>"
    )


def _verify_section(values: dict[str, str]) -> str:
    model, _, coin = values["setting"].partition("-")
    query = {
        "model": model,
        "coin": coin or "private",
        **{name: values[name] for name in ("k", "alpha", "eps1", "eps2")},
        "allocation": values["allocation"],
        "cost1": values["cost1"] or "1",
        "cost2": values["cost2"] or "1",
    }
    if values["delta"] and _needs_delta(values["setting"]):
        query["delta"] = values["delta"]
    if values["beta"]:
        query["beta"] = values["beta"]
    if values["n2"]:
        query["n2"] = values["n2"]
    return (
        '<section aria-labelledby="verify-heading" id="verify">'
        '<h2 id="verify-heading">Is the number real?</h2>'
        "<p>Runs the real private tester on every instance family (Monte Carlo, seeded) in a "
        "background job.</p>"
        f'<div class="row" id="verify-box" data-query="{escape(json.dumps(query), quote=True)}">'
        '<label for="trials">Trials per family</label>'
        '<input id="trials" name="trials" value="auto" size="6">'
        '<label for="seed">Seed</label>'
        '<input id="seed" name="seed" value="0" inputmode="numeric" size="6">'
        '<button type="button" id="verify-button">Verify this plan</button></div>'
        '<progress id="verify-progress" max="1" value="0" '
        'aria-label="verification progress" hidden></progress>'
        '<p id="verify-status" role="status" aria-live="polite"></p>'
        '<div id="verify-result"></div></section>'
    )


def _field(name: str, values: dict[str, str], errors: dict[str, str]) -> str:
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
    message = (
        f'<p class="error" id="{name}-error" role="alert">{escape(error)}</p>' if error else ""
    )
    return f'<div class="field{" bad" if error else ""}">{label}{control}{hint}{message}</div>'


def render(values: dict[str, str], problem: InputError | None = None) -> tuple[str, int]:
    """The page for these form values, and its HTTP status (422 when a field is bad, or
    with ``problem``, a line about the query string itself)."""
    errors: dict[str, str] = {}
    result = ""
    figure = ""
    inputs = _inputs(values)
    permalink = {name: value for name, value in values.items() if value != ""}
    setting = values["setting"]
    try:
        if problem is not None:  # shown beside its field, or above the form
            raise problem
        if setting == "compare":
            for name in ("allocation", "cost1", "cost2", "n2"):  # compare would ignore them
                if values[name] not in ("", DEFAULTS[name]):
                    raise InputError(
                        name,
                        values[name],
                        f"left at {DEFAULTS[name] or 'blank'} when comparing every setting "
                        "(choose one setting to allocate its users)",
                    )
            document = api.compare_document(**inputs)
            result = _compare_section(document, permalink)
            chosen = None
        else:
            model, _, coin = setting.partition("-")
            only_with_their_allocation(  # as POST /v1/plan: Verify would refuse them too
                {name: values[name] or None for name in ("allocation", "cost1", "cost2", "n2")},
                {name for name in ("cost1", "cost2", "n2") if values[name]},
            )
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
            result = _plan_section(document) + _verify_section(values)
            chosen = [setting]
        eps1, eps2 = float(inputs["eps1"]), float(inputs["eps2"])  # checked by now
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
            plot = users_against_eps2(rows, eps2)
        except InputError as refused:  # the plot's sweep over a cost limit: the plan stands
            if refused.parameter != "sweep size":
                raise
            plot = f'<p class="note">No plot for these inputs: {escape(str(refused))}.</p>'
        figure = (
            '<section aria-labelledby="plot-heading"><h2 id="plot-heading">Users against ε2'
            f"</h2>{plot}</section>"
        )
    except InputError as error:
        field = FIELD_OF.get(error.parameter, error.parameter)
        errors[field if field in DEFAULTS else "form"] = str(error)
    except ArithmeticError:  # in range, but the numbers overflow (e.g. α = 1e-320)
        from planner.service.limits import ARITHMETIC_LINE

        errors["form"] = ARITHMETIC_LINE
    status = 422 if errors else 200
    fields = "".join(_field(name, values, errors) for name in DEFAULTS)
    top = (
        f'<p class="error" role="alert" id="form-error">{escape(errors["form"])}</p>'
        if "form" in errors
        else ""
    )
    link = "/?" + urlencode(permalink)
    return (
        PAGE.format(
            fields=fields,
            top=top,
            result=result,
            figure=figure,
            permalink=escape(link, quote=True),
        ),
        status,
    )


@router.get("/", response_class=HTMLResponse)
def calculator(request: Request) -> Response:
    """The calculator page (the query string is the permalink)."""
    token = request.query_params.get("token")
    expected = request.app.state.service.token
    if token is not None and expected is not None:
        rest = {name: value for name, value in request.query_params.items() if name != "token"}
        response = RedirectResponse("/?" + urlencode(rest), status_code=303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        return response
    if not authorized(request):
        return HTMLResponse(LOGIN, status_code=401)
    html, status = render(_form(request), _form_problem(request))
    return HTMLResponse(html, status_code=status)


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
<title>Sample-size planner — token</title></head>
<body><main><h1>This planner needs its access token</h1>
<form method="get" action="/"><label for="token">Token</label>
<input id="token" name="token" type="password" autocomplete="current-password">
<button type="submit">Open</button></form></main></body></html>
"""
