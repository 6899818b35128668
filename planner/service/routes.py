"""The JSON endpoints under ``/v1``: thin routes over :mod:`planner.api`.

Each route parses its typed request, calls one function of the API layer and returns the
same JSON document as the CLI's ``--json``. Errors are handled once, in
:mod:`planner.service.app`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from typing import Annotated, Any

from anyio.to_thread import current_default_thread_limiter
from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request, Response

from planner import api
from planner.api import DeadlineExceededError, check_deadline, deadline
from planner.files import json_text
from planner.inputs import InputError
from planner.service.auth import require_token
from planner.service.limits import (
    MAX_CONCURRENT_SWEEPS,
    MAX_OFFSET,
    MAX_PAGE,
    MAX_SIMULATION_SECONDS,
    MAX_SWEEP_ROWS,
    QUERY_FIELDS,
    check_job,
    cut_text,
)
from planner.service.models import (
    CompareRequest,
    PlanRequest,
    PowerRequest,
    SolveRequest,
    SweepRequest,
    ValidationRequest,
)
from planner.service.state import ServiceState
from planner.service.store import FINISHED, Job, JobStatus, passes


class _Repeated(dict[str, Any]):
    """A JSON object that named a key twice (the key in ``repeated``)."""

    repeated = ""


def mark_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``'s object hook: the object, marked when it names a key twice."""
    made: dict[str, Any] = {}
    repeated = ""
    for name, value in pairs:
        repeated = repeated or (name if name in made else "")
        made[name] = value
    if not repeated:
        return made
    marked = _Repeated(made)
    marked.repeated = repeated
    return marked


def holds_repeat(value: Any) -> bool:
    """Whether a parsed value holds an object that named a key twice, at any depth (a loop,
    not recursion: a body nested as deep as the parser allows is no error here)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, _Repeated):
            return True
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


async def unique_keys(request: Request) -> None:
    """A JSON body that names a field twice (or a query string a parameter twice) is
    refused (422), not read as its last value: ``{"model": "central", "model": "local"}`` is
    ambiguous, whichever the parser keeps. A repeat inside a field's value names the field."""
    names = [name for name, _ in request.query_params.multi_items()]
    repeated = first_repeat(names)
    if repeated is not None:
        raise InputError(repeated, request.query_params[repeated], "given once (it appears twice)")
    known = _query_names(request)
    for name in names:
        if name not in known:  # a misspelt ?bta=0.1 must not answer for the default β
            takes = (
                f"the query parameters here are {', '.join(sorted(known))}"
                if known
                else "this route takes no query parameters"
            )
            raise InputError(name, request.query_params[name], f"left out ({takes})")
    if request.method != "POST":
        return
    try:  # the body is read once: the route's own parsing reuses it
        document = json.loads(await request.body(), object_pairs_hook=mark_repeats)
    except (ValueError, RecursionError):
        return  # not JSON: the route's own parsing gives the line for that
    if isinstance(document, _Repeated):
        shown = _JsonText(json.dumps(document[document.repeated], ensure_ascii=False))
        raise InputError(document.repeated, shown, "given once (the body names it twice)")
    if isinstance(document, dict):
        for name, value in document.items():
            if holds_repeat(value):
                raise InputError(name, _JsonText("…"), "without a key named twice inside it")


def first_repeat(names: list[str]) -> str | None:
    """The first name that appears twice in ``names`` (in the order of its first
    appearance), or None: one pass, not a count per name (quadratic)."""
    seen: set[str] = set()
    twice: set[str] = set()
    for name in names:
        if name in seen:
            twice.add(name)
        seen.add(name)
    return next((name for name in names if name in twice), None)


def _query_names(request: Request) -> set[str]:
    """The query parameters the request's route declares (by the name a client sends)."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return set()
    names: set[str] = set()
    pending = [dependant]
    while pending:  # the route's own parameters and its dependencies'
        item = pending.pop()
        names.update(param.alias for param in item.query_params)
        pending.extend(item.dependencies)
    return names


def only_with_their_allocation(fields: dict[str, Any], given: set[str]) -> None:
    """Refuse what the CLI refuses as options given without their allocation: a cost other
    than 1 without ``allocation: cost``, and (outside a job, where n2 is a size to check
    or not read) an ``n2`` without ``allocation: fixed-n2``. A cost of 1, the default, may come
    with any allocation (the calculator always sends both)."""
    allocation = str(fields.get("allocation") or "fewest").strip().lower()
    for name in ("cost1", "cost2"):
        if name in given and allocation != "cost" and not _is_one(fields[name]):
            raise InputError(name, fields[name], "given with allocation cost only")
    job = "kind" in fields  # a job's n2: a size to check, or refused by its kind
    if not job and fields.get("n2") is not None and allocation != "fixed-n2":
        raise InputError("n2", fields["n2"], "given with allocation fixed-n2 only")


def _is_one(value: object) -> bool:
    """Is a cost the default 1, however the request spells it (1, 1.0, "1", "1.00")?"""
    try:
        return float(str(value).strip()) == 1.0
    except ValueError:
        return False


class _JsonText(str):
    """A value shown as JSON text in a 422 line (``null``, not ``'null'``)."""

    def __repr__(self) -> str:
        return str(self)


router = APIRouter(prefix="/v1", dependencies=[Depends(require_token), Depends(unique_keys)])
open_router = APIRouter(prefix="/v1", dependencies=[Depends(unique_keys)])
DOCUMENT = {"description": "the JSON document of the CLI's --json (docs/json-schema.md)"}
ERRORS: dict[int | str, dict[str, Any]] = {
    413: {"description": "request body too large"},
    422: {"description": '{"error": "invalid <parameter> = <value>: must be <allowed>"}'},
}


def json_response(document: Any, status_code: int = 200) -> Response:
    """The document as the CLI prints it (``json.dumps``, UTF-8)."""
    return Response(
        json_text(document),
        status_code=status_code,
        media_type="application/json",
    )


async def state_of(request: Request) -> ServiceState:
    return request.app.state.service


State = Annotated[ServiceState, Depends(state_of)]


INLINE_SECONDS = 0.01
"""A plan, compare or power answer not in the cache is first computed on the event loop
for at most this long (its deadline, checked at every search step): most take about a
millisecond, and the thread pool's hop (and the two threads' turns at the interpreter lock)
had cost more than the plan. One that runs past it is computed again in the thread pool."""
INLINE_KINDS = frozenset({"plan", "compare", "power"})
"""The kinds tried on the event loop first (a solve, which may take seconds, never is)."""


def threads_at_work(state: ServiceState) -> bool:
    """Whether a thread has work (an answer handed to the compute threads, not yet done, or
    any other: a sweep, the calculator page, a sync route in the default pool): then an
    uncached plan is not tried on the event loop. A
    review: under a burst of uncached plans every one was tried there first, each attempt
    holding the loop (its turns at the interpreter lock shared with the pool's threads, or
    waiting there for a value a thread was computing, ``ComputedOnce``), and
    ``/v1/health`` answered in 3.6-7.7 s (40 clients, two cores; about 2 ms at the median
    since, ``benchmarks/bench_health.py``)."""
    return (
        state.in_threads > 0
        or state.compute_threads.borrowed_tokens > 0
        or current_default_thread_limiter().borrowed_tokens > 0
    )


async def _answer(
    state: ServiceState, kind: str, fields: dict[str, Any], compute: Callable[[], Any]
) -> str:
    """A cached answer at once; a plan, compare or power computed on the event loop when it
    takes at most :data:`INLINE_SECONDS` and no thread of the pool is at work
    (:func:`threads_at_work`); otherwise computed in the thread pool, off the event loop:
    a solve can take seconds, and computed inline it had held up every other request,
    ``/v1/health`` included, for as long. The computation is stopped at the service's cap
    (``state.request_seconds``; a 503 naming it)."""
    text = state.cache.cached(kind, fields)
    if text is not None:
        return text
    seconds = state.request_seconds
    arrived = time.monotonic()  # the cap counts the wait for a compute thread too
    if kind in INLINE_KINDS and not threads_at_work(state):
        try:
            with deadline(min(seconds, INLINE_SECONDS)):
                return state.cache.answer(kind, fields, compute)
        except DeadlineExceededError:
            if seconds <= INLINE_SECONDS:
                raise

    def capped() -> Any:  # stops within a search step of the cap, freeing its thread
        with deadline(seconds, since=arrived):
            check_deadline()  # the wait for a thread took the whole cap
            return compute()

    state.in_threads += 1  # now: the pool's own count starts after the hop's first await
    try:
        return await state.in_compute_threads(state.cache.answer, kind, fields, capped)
    finally:
        state.in_threads -= 1


async def plan_text(body: PlanRequest, state: ServiceState) -> str:
    """``POST /v1/plan``'s answer (JSON text): the route's and the fast path's."""
    fields = power_as_beta(body.model_dump(), body.model_fields_set)
    only_with_their_allocation(fields, body.model_fields_set)
    try:
        return await _answer(
            state, "plan", fields, lambda: api.plan_document(**fields, simulation_budget=0)
        )
    except InputError as error:
        if hasattr(error, "gaps"):  # not covered: point at the job that simulates it
            # (a review: the CLI's words named simulation_budget, no field of this request)
            line = str(error).replace(
                "simulating it is off (a budget of 0 s: --simulation-budget)",
                "POST /v1/plan does not simulate",
            )
            refusal = await state.in_compute_threads(_plan_job_refusal, fields)
            if refusal is not None and refusal in line:  # said already (k below the floor)
                error.args = (line,)
            elif refusal is None:
                error.args = (f"{line}; a job of kind plan (POST /v1/validations) simulates it",)
            else:  # a new user's review: the job suggested was then refused
                error.args = (f"{line}; nor would a job of kind plan simulate it: {refusal}",)
        raise


def _plan_job_refusal(fields: dict[str, Any]) -> str | None:
    """Why a job of kind plan would refuse to simulate this ``/v1/plan`` query at the
    most budget a job may have (``check_job``: k below the simulation floor, a simulation
    over the budget, an allocation a plan job does not take), or None."""
    job = {name: fields.get(name) for name in (*QUERY_FIELDS, "accounting", "allocation")}
    job = {**job, "kind": "plan", "simulation_budget": MAX_SIMULATION_SECONDS}
    try:
        check_job(job, job.keys())
    except InputError as refusal:
        return str(getattr(refusal, "reason", None) or refusal)  # not the gaps again
    return None


async def compare_text(body: CompareRequest, state: ServiceState) -> str:
    """``POST /v1/compare``'s answer (JSON text)."""
    fields = power_as_beta(body.model_dump(), body.model_fields_set)
    return await _answer(state, "compare", fields, lambda: api.compare_document(**fields))


async def solve_text(body: SolveRequest, state: ServiceState) -> str:
    """``POST /v1/solve``'s answer (JSON text)."""
    fields = power_as_beta(body.model_dump(), body.model_fields_set)
    return await _answer(state, "solve", fields, lambda: api.solve_document(**fields))


async def power_text(body: PowerRequest, state: ServiceState) -> str:
    """``POST /v1/power``'s answer (JSON text)."""
    fields = body.model_dump()
    return await _answer(state, "power", fields, lambda: api.power_document(**fields))


@router.post("/plan", responses={200: DOCUMENT, **ERRORS})
async def plan(body: PlanRequest, state: State) -> Response:
    """How many users each group needs (``planner plan --json``, schema planner.plan/1).

    A query outside the covered region is refused (422) here: a job of kind ``plan``
    (``POST /v1/validations``) simulates it, as ``planner plan`` does.
    """
    return Response(await plan_text(body, state), media_type="application/json")


@router.post("/compare", responses={200: DOCUMENT, **ERRORS})
async def compare(body: CompareRequest, state: State) -> Response:
    """Every setting, fewest users first (``planner compare --json``)."""
    return Response(await compare_text(body, state), media_type="application/json")


@router.post("/solve", responses={200: DOCUMENT, **ERRORS})
async def solve(body: SolveRequest, state: State) -> Response:
    """The one parameter left out of n1, n2, alpha, eps2 (``planner solve --json``)."""
    return Response(await solve_text(body, state), media_type="application/json")


@router.post("/sweep", responses={200: DOCUMENT, **ERRORS})
async def sweep(
    body: SweepRequest, state: State, accept: Annotated[str | None, Header()] = None
) -> Response:
    """Plans over every combination of the listed values; CSV with ``Accept: text/csv``.

    Computed in the thread pool and stopped at the service's cap per request (503), at most
    :data:`MAX_CONCURRENT_SWEEPS` at once in a process (429 beyond): a hostile review's
    eight 20,000-row sweeps, each abandoned by its client after a second, had run on for
    100 s of CPU, and one client could start 40 at once."""
    fields = power_as_beta(body.model_dump(), body.model_fields_set, spec=True)
    inputs = {**fields, "max_rows": MAX_SWEEP_ROWS}
    as_csv = accept is not None and "text/csv" in accept
    arrived = time.monotonic()

    def capped() -> Response:
        # the slot is taken in the compute thread: a sweep still waiting for a thread had
        # held one, and a third sweep was refused while none computed (a review)
        if not state.sweeps.acquire(blocking=False):
            raise HTTPException(
                status_code=429,
                detail=(
                    f"invalid request: {MAX_CONCURRENT_SWEEPS} sweeps are being computed "
                    f"already, at most {MAX_CONCURRENT_SWEEPS} at once; send it again once one "
                    "has answered"
                ),
                headers={"Retry-After": "5"},
            )
        try:
            with deadline(state.request_seconds, since=arrived):
                check_deadline()
                if as_csv:
                    return Response(api.sweep_csv(**inputs), media_type="text/csv; charset=utf-8")
                return json_response(api.sweep_document(**inputs))
        finally:
            state.sweeps.release()

    return await state.in_compute_threads(capped)


@router.get("/explain", responses={200: DOCUMENT, **ERRORS})
async def explain(
    model: Annotated[str, Query(max_length=20)],
    coin: Annotated[str, Query(max_length=20)] = "private",
    as_stated: bool = False,
    *,
    state: State,
) -> Response:
    """The formula behind a setting: terms, theorem, validity (text and LaTeX)."""
    document = await state.in_compute_threads(api.explain_document, model, coin, as_stated)
    return json_response(document)


@router.post("/validations", status_code=202, responses={202: {"description": "the job"}, **ERRORS})
def start_validation(body: ValidationRequest, state: State) -> Response:
    """Queue a verification job (``planner validate`` or ``plan --exact``); 202 and its id."""
    fields = power_as_beta(body.model_dump(), body.model_fields_set)
    only_with_their_allocation(fields, body.model_fields_set)
    checked = check_job(fields, given=body.model_fields_set)
    return _accepted(state.submit(checked))


@router.get("/validations")
def list_validations(
    state: State,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    status: Annotated[str | None, Query(max_length=20)] = None,
) -> Response:
    """Jobs, newest first, without their reports (``limit``/``offset`` pages; ``status``:
    only the jobs in that state)."""
    wanted = None
    if status is not None:
        try:
            wanted = JobStatus(status.lower())
        except ValueError:
            states = ", ".join(state.value for state in JobStatus)
            raise InputError("status", status, f"one of {states}") from None
    jobs, total = state.store.page(limit=limit, offset=offset, status=wanted)
    following = offset + len(jobs)
    return json_response(
        {
            "schema": "planner.jobs/1",
            "total": total,
            "offset": offset,
            "limit": limit,
            "next_offset": following if following < total else None,
            "jobs": [job.to_dict(with_report=False) for job in jobs],
        }
    )


def _job_id(job_id: str) -> str:
    """The id as stored (lower case): 32 hexadecimal digits, in either case."""
    lowered = job_id.lower()
    if len(lowered) != 32 or any(char not in "0123456789abcdef" for char in lowered):
        raise InputError("id", job_id, "a job id (32 hexadecimal digits)")
    return lowered


@router.get("/validations/{job_id}", responses={404: {"description": "no such job"}})
def get_validation(job_id: str, state: State) -> Response:
    """A job: status, progress, provenance and, when done, the report."""
    job = state.store.get(_job_id(job_id))
    if job is None:
        return json_response({"error": f"no job {job_id}", "parameter": "id"}, 404)
    return json_response(job.to_dict())


@router.delete(
    "/validations/{job_id}",
    responses={404: {"description": "no such job"}, 409: {"description": "already finished"}},
)
def cancel_validation(job_id: str, state: State) -> Response:
    """Cancel a queued or running job; 409 for a finished one (left as it is)."""
    job = state.store.get(_job_id(job_id))
    if job is None:
        return json_response({"error": f"no job {job_id}", "parameter": "id"}, 404)
    if job.status in FINISHED:
        line = f"job {job.id} has already finished ({job.status.value}): nothing to cancel"
        return json_response({"error": line, "parameter": "id"}, 409)
    cancelled = state.store.cancel(job.id)
    state.runner.wake()
    return json_response((cancelled or job).to_dict(with_report=False))


@router.post(
    "/validations/{job_id}/rerun",
    status_code=202,
    responses={404: {"description": "no such job"}, 409: {"description": "not finished yet"}},
)
def rerun_validation(job_id: str, state: State) -> Response:
    """Queue a job again with the same request and seed (e.g. an interrupted one)."""
    job = state.store.get(_job_id(job_id))
    if job is None:
        return json_response({"error": f"no job {job_id}", "parameter": "id"}, 404)
    if job.status not in FINISHED:  # a second copy of a job still on its way
        line = (
            f"job {job.id} is still {job.status.value}: rerun it once it has finished "
            "(DELETE cancels it)"
        )
        return json_response({"error": line, "parameter": "id"}, 409)
    checked = check_job({"kind": job.kind, **job.request})
    return _accepted(state.submit(checked, rerun_of=job.id))


def _accepted(job: Job) -> Response:
    """202 with the job, and ``Location`` where to follow it."""
    response = json_response(job.to_dict(), 202)
    response.headers["Location"] = f"/v1/validations/{job.id}"
    return response


@router.get("/version")
async def version() -> Response:
    """Code and constants version (as every report records them). On the event loop (the
    versions are read once), not the thread pool: it answers while every pool thread
    computes."""
    return json_response(api.version_document())


@open_router.api_route("/health", methods=["GET", "HEAD"])
async def health(state: State) -> Response:
    """Liveness, and how many jobs are queued and running (no token needed). On the
    event loop (one indexed SQLite count), not the thread pool: with 45 solves computing
    it had waited 17.5 s for a thread. ``store``: ``failing`` while the job runner finds
    the store failing in a way that does not pass by itself (read from the runner, no
    write here; the database's path only in the server's log), or while the count itself
    fails so (a corrupt file: then ``queued`` and ``running`` are null; it had been a 500,
    and an error line in the log at every poll)."""
    store_problem = state.runner.store_problem
    try:
        counts: dict[str, int | None] = {**state.store.counts()}
    except sqlite3.Error as error:
        if passes(error):
            raise  # busy or locked: a 503 with Retry-After, as any route's
        counts = {"queued": None, "running": None}
        cause = str(error).splitlines()[0] if str(error) else ""
        store_problem = store_problem or (
            f"the job store cannot be read ({type(error).__name__}: {cut_text(cause)}); "
            "the server's operator must repair or replace the file"
        )
    problems = [line for line in (store_problem, state.runner.cluster_problem()) if line]
    return json_response(
        {
            "status": "degraded" if problems else "ok",
            "store": "ok" if store_problem is None else "failing",
            "workers": state.runner.workers,
            "queued": counts["queued"],
            "running": counts["running"],
            **({"problem": "; ".join(problems)} if problems else {}),
        }
    )


def power_as_beta(fields: dict[str, Any], given: set[str], *, spec: bool = False) -> dict[str, Any]:
    """A request's ``power`` (1 − β) as its ``beta`` (``spec``: a sweep's value, list or
    spec string of powers); ``power`` given with ``beta`` is one 422 naming the two."""
    from planner.inputs import beta_or_power, refuse_beta_with_power

    power = fields.pop("power", None)
    if power is None:
        return fields
    refuse_beta_with_power(fields.get("beta"), power, beta_given="beta" in given)
    if spec:
        from planner.power import beta_spec_of_power

        return {**fields, "beta": beta_spec_of_power(None, power)}
    return {**fields, "beta": beta_or_power(None, power)}


@router.post("/power", responses={200: DOCUMENT, **ERRORS})
async def power(body: PowerRequest, state: State) -> Response:
    """The smallest error bound β, and the power 1 − β, that the given n1 and n2 reach
    (``planner power --json``, schema planner.power/1)."""
    return Response(await power_text(body, state), media_type="application/json")


@router.get("/power", responses={200: DOCUMENT, **ERRORS})
async def power_query(
    state: State,
    model: Annotated[str, Query(max_length=20)],
    k: Annotated[str, Query(max_length=200)],
    alpha: Annotated[str, Query(max_length=200)],
    eps1: Annotated[str, Query(max_length=200)],
    eps2: Annotated[str, Query(max_length=200)],
    n1: Annotated[str, Query(max_length=200)],
    n2: Annotated[str, Query(max_length=200)],
    coin: Annotated[str, Query(max_length=20)] = "private",
    delta: Annotated[str | None, Query(max_length=200)] = None,
    accounting: Annotated[str, Query(max_length=20)] = "exact",
) -> Response:
    """``POST /v1/power`` with its fields as query parameters (numbers as text)."""
    fields = PowerRequest(
        model=model,
        coin=coin,
        k=k,
        alpha=alpha,
        eps1=eps1,
        eps2=eps2,
        n1=n1,
        n2=n2,
        delta=delta,
        accounting=accounting,
    ).model_dump()
    text = await _answer(state, "power", fields, lambda: api.power_document(**fields))
    return Response(text, media_type="application/json")
