"""The FastAPI application: routes, the web page, errors as one line, the body-size cap.

:func:`create_app` builds it around one database file; ``planner serve`` runs it on
uvicorn. Every error answers ``{"error": "<one line>"}`` (plus ``parameter`` when one is
named): 401 without the token, 404/405 for unknown routes, 413 for a body over
:data:`~planner.service.limits.MAX_BODY_BYTES`, 414 or 422 for a query string over its
caps, 422 for a bad parameter, 503 for a plan, compare or solve past
:data:`~planner.service.limits.MAX_REQUEST_SECONDS`.
"""

from __future__ import annotations

import gc
import json
import logging
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from planner import api
from planner.api import DeadlineExceededError
from planner.files import json_text
from planner.inputs import ALLOWED, InputError
from planner.service.fastpath import FastAnswers
from planner.service.hosts import is_loopback
from planner.service.limits import (
    ARITHMETIC_LINE,
    MAX_BODY_BYTES,
    MAX_OFFSET,
    MAX_PAGE,
    MAX_REQUEST_SECONDS,
    MAX_TRIALS,
    BodyTooLargeError,
    QueryTooLargeError,
    check_query_string,
    cut_text,
)
from planner.service.runner import JobRunner
from planner.service.state import ServiceState
from planner.service.store import JobStore, store_status

log = logging.getLogger("planner.service")

SERVICE_ALLOWED = {
    "trials": f"auto or an integer in [1, {MAX_TRIALS:,}]",
    "max-trials": f"an integer in [200, {MAX_TRIALS}]",
    "seed": f"an integer in [0, {2**63 - 1}]",
    "limit": f"an integer in [1, {MAX_PAGE}]",
    "offset": f"an integer in [0, {MAX_OFFSET}]",
    # a value of the wrong JSON type: the keys a right one takes (a review: "must be a
    # valid string" alone)
    "protocol": "a protocol's key, one of "
    + ", ".join(key for key in api.PROTOCOL_KEYS if "/" not in key),  # no mixed pair's
    "alone": "true or false",
    "settings": (
        "a list of at most 5 keys, each one of "
        + ", ".join((*api.PROTOCOL_KEYS, *api.MIXED_SETTING_KEYS))
    ),
}
"""The allowed range of the service's own fields and query parameters, named in the 422
line when pydantic refuses a value's type or bound (``validation_line``), as the value
checks name it (``check_trials``, ``check_integer``)."""
FIELD_SPELLING = {
    "max-trials": "max_trials",
    "simulation-budget": "simulation_budget",
    "family": "families",
}
"""The CLI's option names that a check raises under, as the request's JSON fields spell
them: a 422 line names the field the client sent."""
CLI_WORDS = {
    " (--family)": "",
    "--path fast": 'path "fast"',
    "--exact": "kind exact",
    "planner validate": "kind validate",
}
"""Words of the CLI's that a shared check's line uses, as a request says them; any other
``--option`` is the request's field of that name (``--simulation-budget``:
``simulation_budget``)."""
STORE_RETRY_SECONDS = 5
"""``Retry-After`` of a 503 for a job store that refused a request (e.g. locked)."""
PARSE_LINE = (
    "invalid body: must be a JSON object (it could not be read: nested too deeply, a "
    "number too long, or not UTF-8)"
)


def request_words(line: str) -> str:
    """A shared check's line with the CLI's option names as the request spells them
    (``fewer trials or families (--family)`` → ``… (families)``)."""
    for cli, request in CLI_WORDS.items():
        line = line.replace(cli, request)
    return re.sub(r"--([a-z][a-z-]*)", lambda match: match[1].replace("-", "_"), line)


def _error(status: int, line: str, parameter: str | None = None) -> Response:
    content: dict[str, Any] = {"error": line}
    if parameter is not None:
        content["parameter"] = parameter
    # json_text: a lone surrogate echoed from the request is escaped, not a 500
    return Response(json_text(content), status_code=status, media_type="application/json")


def _shown(value: Any) -> str:
    """The value as the request spelled it (JSON: null, true), cut to 60 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return cut_text(text)


def _as_text(value: Any) -> Any:
    """A body that is not JSON (form data, plain text) as the text it holds, not Python's
    ``b'…'`` repr; bytes that are not UTF-8 with their undecodable bytes replaced."""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    return value


def _json_media(content_type: str | None) -> bool:
    """Whether a request's Content-Type is one the service reads as JSON (a body sent
    without one is not read as JSON)."""
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or media.endswith("+json")


UNKNOWN_NAMES_SHOWN = 5
"""Unknown fields a 422 line names (then "and N more")."""


def _cut(name: str) -> str:
    """A field's name as a line shows it: cut as values are (:func:`cut_text`), and one
    that is empty or holds a character that is not printable (a newline, an escape,
    U+2028) quoted with its escapes, as a value is (a review: a name with a newline and a
    terminal escape had split the one line)."""
    return cut_text(name if name and name.isprintable() else repr(name))


def validation_line(error: RequestValidationError) -> tuple[str, str]:
    """The first pydantic error as ``invalid <field> = <value>: <reason>``; a field the
    request does not have comes first (``eps_2`` had been reported as ``eps2 = None:
    must be given``, hiding the misspelling), every such field named."""
    unknown = [
        str(item["loc"][-1])
        for item in error.errors()
        if item.get("type") == "extra_forbidden" and item.get("loc")
    ]
    if unknown:
        # each name cut as a value is, and at most five named (a review: a 60,000-character
        # name was echoed twice, 5,000 unknown keys made a 34 KB line)
        distinct = [_cut(name) for name in dict.fromkeys(unknown)]
        names = ", ".join(distinct[:UNKNOWN_NAMES_SHOWN])
        if len(distinct) > UNKNOWN_NAMES_SHOWN:
            names += f" and {len(distinct) - UNKNOWN_NAMES_SHOWN:,} more"
        what = "not a field of this request" if len(distinct) == 1 else "not fields of this request"
        return distinct[0], f"invalid {names}: {what}"
    first = error.errors()[0]
    loc = first.get("loc", ())
    location = [str(part) for part in loc if part not in ("body", "query")]
    kind = first.get("type", "")
    if kind == "json_invalid":
        return "body", "invalid body: must be a JSON object (it is not valid JSON)"
    if kind in ("model_attributes_type", "dict_type") or not location:
        return (
            "body",
            f"invalid body = {_shown(_as_text(first.get('input')))}: must be a JSON object",
        )
    name = _cut(location[0])
    if kind == "extra_forbidden":
        return name, f"invalid {name}: not a field of this request"
    if kind == "missing":  # the CLI's words for a missing value, with the allowed range
        allowed = {**ALLOWED, **SERVICE_ALLOWED}.get(name.replace("_", "-"))
        return name, f"missing {name}: must be given" + (f" ({allowed})" if allowed else "")
    reason = str(first.get("msg", "invalid")).replace("Input should be", "must be")
    allowed = {**ALLOWED, **SERVICE_ALLOWED}.get(name.replace("_", "-"))
    too_long = [  # the field's own (a union names each member after the field)
        e for e in error.errors() if e.get("type") == "too_long" and e["loc"][:2] == loc[:2]
    ]
    if too_long:  # a list: its length, not each value's range (a union tries both)
        most = (too_long[0].get("ctx") or {}).get("max_length")
        reason = f"must be a list of at most {most} values"
    elif allowed is not None:  # the allowed range, not pydantic's type or bound
        reason = f"must be {allowed}"
    return name, f"invalid {name} = {_shown(first.get('input'))}: {reason}"


class BodyLimit:
    """Pure ASGI middleware: 413 for a body over the cap (declared or streamed), 414 or 422
    for a query string over its caps (before anything parses it)."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            check_query_string(scope.get("query_string") or b"")
        except QueryTooLargeError as error:
            await _error(error.status, str(error), "query")(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                size = -1
            if size < 0 or size > self.limit:
                line = "invalid content-length" if size < 0 else str(BodyTooLargeError(size))
                await _error(413 if size > 0 else 400, line, "body")(scope, receive, send)
                return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise BodyTooLargeError()
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, tracked_send)
        except BodyTooLargeError as error:
            if not started:
                await _error(413, str(error), "body")(scope, receive, send)


def request_host(header: str) -> str | None:
    """The host of a ``Host`` header (``[::1]:8000`` → ``[::1]``), lower case, or None when
    it is not ``host[:port]``."""
    if header.startswith("["):
        end = header.find("]")
        if end < 0:
            return None
        host, rest = header[: end + 1], header[end + 1 :]
    else:
        host, colon, port = header.partition(":")
        rest = colon + port
    if rest and not (rest.startswith(":") and (rest[1:] == "" or rest[1:].isdigit())):
        return None
    return host.lower() or None


class LoopbackHostOnly:
    """Pure ASGI middleware for a server without a token: a request whose ``Host`` is not
    a loopback name or address (localhost, 127.0.0.1, [::1], any port) is a 400 line
    naming ``host``. A hostile review: a web page on any site could reach a token-less
    server on loopback through DNS rebinding (its own name pointed at 127.0.0.1), and the
    service answered ``Host: attacker.example``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"host")
        if given is not None:  # none: no browser (HTTP/1.1 browsers always send one)
            text = given.decode("latin-1")
            host = request_host(text)
            if host is None or not is_loopback(host):
                line = (
                    f"invalid Host = {_shown(cut_text(text))}: must be localhost, 127.0.0.1 "
                    "or [::1] (with any port) on a server without --token"
                )
                await _error(400, line, "host")(scope, receive, send)
                return
        await self.app(scope, receive, send)


NO_STORE_PATHS = ("/v1/validations", "/jobs/")
"""Paths whose answers (jobs, their reports) a cache must not keep: ``Cache-Control:
no-store``."""


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    """The headers every answer to ``path`` carries (:class:`SecurityHeaders`)."""
    return [
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
        (b"content-security-policy", b"frame-ancestors 'none'"),
        *([(b"cache-control", b"no-store")] if path.startswith(NO_STORE_PATHS) else []),
    ]


class SecurityHeaders:
    """Pure ASGI middleware: ``X-Content-Type-Options: nosniff`` on every answer,
    ``X-Frame-Options: DENY`` and ``Content-Security-Policy: frame-ancestors 'none'`` (no
    page of this server inside another site's frame), and ``Cache-Control: no-store`` on
    jobs and their reports. A hostile review found none of them. A 500 (an unhandled
    exception) is answered outside this middleware, by Starlette's outermost one: its
    handler adds them itself (``unexpected`` in :func:`create_app`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        added = security_headers(str(scope.get("path", "")))

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                names = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in added if name not in names]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


def create_app(
    database: Path | str,
    *,
    workers: int = 2,
    token: str | None = None,
    time_limit: float = 600.0,
    run_jobs: bool = True,
    client: Any = None,
    request_time_limit: float = MAX_REQUEST_SECONDS,
    owner: bool = True,
    loopback_hosts_only: bool = False,
) -> FastAPI:
    """The service around one database file (``run_jobs=False``: queue but never run;
    ``client``: a ``distributed.Client`` whose cluster runs the jobs, see
    :func:`planner.cluster.connect`; the caller closes it; ``request_time_limit``: seconds
    a plan, compare or solve request may compute, 503 beyond). ``owner=False``: one of
    ``planner serve --workers N``'s other HTTP processes, beside the one that holds the
    database's lock and runs the jobs: it stores, cancels and reads jobs in the same
    database (WAL), which that process's runner picks up (within its poll, 0.2 s), and
    neither takes the lock nor recovers nor runs jobs. ``loopback_hosts_only``: refuse
    a ``Host`` that is not loopback (:class:`LoopbackHostOnly`; ``planner serve`` without a
    token)."""
    store = JobStore(database, owner=owner)  # one server per file (a second is refused)
    try:
        return _app_around(
            store,
            workers=workers,
            token=token,
            time_limit=time_limit,
            run_jobs=run_jobs and owner,
            client=client,
            request_time_limit=request_time_limit,
            owner=owner,
            loopback_hosts_only=loopback_hosts_only,
        )
    except BaseException:  # the store's locks released, not held until the process ends
        store.close()
        raise


def _app_around(
    store: JobStore,
    *,
    workers: int,
    token: str | None,
    time_limit: float,
    run_jobs: bool,
    client: Any,
    request_time_limit: float,
    owner: bool,
    loopback_hosts_only: bool,
) -> FastAPI:
    """:func:`create_app`'s app around its opened store (closed by the caller if this
    fails)."""
    # the modules themselves, not through planner.service (whose __init__ imports this one)
    import planner.service.apidocs as apidocs
    import planner.service.page as page
    import planner.service.routes as routes
    from planner import api

    if owner:
        store.recover()
    runner = JobRunner(store, workers=workers, time_limit=time_limit, client=client)
    versions = api.version_document()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        """Run the jobs while the app serves; at its end stop the runner (its last attempt
        at the outcomes not recorded yet), then close the store: its connections and its
        locks on the database file (an operator's review: shutdown had never closed it,
        and the file stayed locked for as long as the process lived)."""
        try:
            if run_jobs:
                runner.start()
            # what start-up loaded (modules, constants, routes: ~60,000 tracked objects) is
            # kept out of the garbage collector's full passes, each of which would walk it
            # again (about 10 ms, with every request of the process waiting)
            gc.collect()
            gc.freeze()
            yield
        finally:
            runner.stop()
            store.close()

    app = FastAPI(
        title="hetero-closeness-planner",
        version=versions["code_version"],
        summary="Sample sizes for private closeness testing under heterogeneous privacy.",
        lifespan=lifespan,
        docs_url=None,  # /docs is apidocs' Swagger UI, its files served here (no CDN)
        redoc_url=None,
        openapi_url=None,  # /openapi.json is apidocs' too, built off the event loop
    )
    app.state.service = ServiceState(
        store,
        runner,
        token,
        versions["code_version"],
        versions["constants_version"],
        request_seconds=request_time_limit,
    )
    app.include_router(routes.open_router)
    app.include_router(routes.router)
    app.include_router(page.router)
    app.include_router(apidocs.router)
    apidocs.install(app)  # descriptions in Markdown, as Swagger UI renders them
    app.add_middleware(FastAnswers)  # inside BodyLimit (the last added is the outermost)
    app.add_middleware(BodyLimit)
    if loopback_hosts_only:
        app.add_middleware(LoopbackHostOnly)  # outermost: before anything reads the request
    app.add_middleware(SecurityHeaders)  # on every answer, the refusals above included

    @app.exception_handler(InputError)
    async def input_error(_: Request, error: InputError) -> Response:
        line, parameter = str(error), error.parameter
        if parameter in FIELD_SPELLING:  # as the request spells the field
            line = line.replace(parameter, FIELD_SPELLING[parameter], 1)
            parameter = FIELD_SPELLING[parameter]
        return _error(422, request_words(line), parameter)

    @app.exception_handler(RequestValidationError)
    async def request_error(request: Request, error: RequestValidationError) -> Response:
        parameter, line = validation_line(error)
        first = error.errors()[0]  # not JSON, or no body at all: 400 (README)
        if parameter == "body" and not _json_media(request.headers.get("content-type")):
            # a body sent as a form or text is not read as JSON at all: say so
            given = request.headers.get("content-type")
            shown = f"came as {given}" if given else "came without one"
            line += f" sent as Content-Type application/json (this one {shown})"
        unreadable = first.get("type") == "json_invalid" or (
            first.get("type") == "missing" and tuple(first.get("loc", ())) == ("body",)
        )
        if unreadable and first.get("type") == "missing":
            line = "invalid body: must be a JSON object (the request has none)"
        return _error(400 if unreadable else 422, line, parameter)

    @app.exception_handler(HTTPException)
    async def http_error(_: Request, error: HTTPException) -> Response:
        if isinstance(error.__cause__, BodyTooLargeError):  # streamed past the cap
            return _error(413, str(error.__cause__), "body")
        if error.status_code == 400 and "parsing the body" in str(error.detail):
            return _error(400, PARSE_LINE, "body")  # FastAPI's own line names nothing
        response = _error(error.status_code, str(error.detail))
        for name, value in (error.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(ArithmeticError)
    async def arithmetic_error(_: Request, error: ArithmeticError) -> Response:
        """Inputs inside their ranges whose numbers overflow (e.g. α = 1e-320)."""
        return _error(422, ARITHMETIC_LINE, "inputs")

    @app.exception_handler(DeadlineExceededError)
    async def over_time(_: Request, error: DeadlineExceededError) -> Response:
        """A plan, compare, solve or sweep past the service's cap per request (stopped
        there), its wait for a compute thread included."""
        line = (
            f"invalid request: its computation ran past {error.seconds:g} s (its wait for a "
            "thread included), the service's cap per plan, compare, solve or sweep request "
            "(the command line has none)"
        )
        return _error(503, line, "request")

    @app.exception_handler(sqlite3.Error)
    async def store_failed(request: Request, error: sqlite3.Error) -> Response:
        """The job store refused a read or write. Busy or locked (another process's write
        past the busy timeout: a hostile review's POST had answered 500 after 30 s) passes:
        503 and when to try again. Anything else does not pass by itself (a review: a
        corrupt file, a read-only one or an I/O error had been 503, "try again"): 500, or
        507 for a full disk, without ``Retry-After``; the server's log names the file."""
        reason = cut_text(str(error).splitlines()[0] if str(error) else type(error).__name__)
        status = store_status(error)
        if status == 503:
            line = f"the job store is unavailable for now ({reason}): send it again shortly"
            response = _error(503, line)
            response.headers["Retry-After"] = str(STORE_RETRY_SECONDS)
            return response
        # the file's path goes to the server's log, not to a client (``/v1/health`` needs
        # no token): the operator who must act reads the log
        log.error(
            "planner serve: the job store's database %s failed: %s",
            request.app.state.service.store.path,
            reason,
        )
        if status == 507:
            line = (
                f"the job store's database is on a full disk ({reason}): the server's "
                "operator must free space (its log names the file)"
            )
        else:
            line = (
                f"the job store cannot use its database ({reason}): this does not pass by "
                "itself; the server's operator must repair or replace the file (its log "
                "names it)"
            )
        return _error(status, line)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> Response:
        """A bug, not bad input: one line, no traceback to the client (uvicorn logs it).
        Starlette answers it in its outermost middleware, outside :class:`SecurityHeaders`:
        the headers are added here (a review found a 500 without them)."""
        response = _error(500, f"internal error: {type(error).__name__}")
        for name, value in security_headers(str(request.scope.get("path", ""))):
            response.headers[name.decode()] = value.decode()
        return response

    @app.exception_handler(BodyTooLargeError)
    async def too_large(_: Request, error: BodyTooLargeError) -> Response:
        return _error(413, str(error), "body")

    return app
