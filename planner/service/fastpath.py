"""The common case of ``POST /v1/plan``, ``/v1/compare``, ``/v1/solve`` and ``/v1/power``
answered without FastAPI's routing and dependency machinery.

Routing, the dependencies (token, repeated keys, state), the body's second parse and
pydantic's validation through FastAPI took more of a plan request's time than a cached
answer (about two thirds of it). Here the body is read and parsed once (with the repeated-key
check), validated by the route's own request model and answered by the route's own function
(:func:`planner.service.routes.plan_text` …), so the document, the cache and the deadline
are the route's. Anything off the common case — a query string, another content type,
no token, a body that is not a JSON object, names a key twice or fails validation — goes
to the FastAPI route with the body as it came, which answers (or refuses) as it always
has. An error the answer raises is answered by the app's own exception handler.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

import planner.service.routes as routes
from planner.service.auth import authorized
from planner.service.models import CompareRequest, PlanRequest, PowerRequest, SolveRequest

Answer = Callable[[Any, Any], Awaitable[str]]
ROUTES: dict[str, tuple[type[BaseModel], Answer]] = {
    "/v1/plan": (PlanRequest, routes.plan_text),
    "/v1/compare": (CompareRequest, routes.compare_text),
    "/v1/solve": (SolveRequest, routes.solve_text),
    "/v1/power": (PowerRequest, routes.power_text),
}
JSON_TYPES = (b"application/json", b"application/json; charset=utf-8")


class FastAnswers:
    """Pure ASGI middleware (inside :class:`~planner.service.app.BodyLimit`) for the four
    deterministic POST routes' common case; everything else passes through untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = ROUTES.get(scope["path"]) if scope["type"] == "http" else None
        if (
            route is None
            or scope["method"] != "POST"
            or scope.get("query_string")
            or scope.get("root_path")
        ):
            await self.app(scope, receive, send)
            return
        content_type = next(
            (value for name, value in scope["headers"] if name == b"content-type"), None
        )
        if content_type is None or content_type.lower() not in JSON_TYPES:
            await self.app(scope, receive, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        request = Request(scope)
        checked = _checked(route[0], body) if authorized(request) else None
        if checked is None:  # the route answers, or refuses, as it always has
            await self.app(scope, _replay(body, receive), send)
            return
        try:
            text = await route[1](checked, scope["app"].state.service)
        except Exception as error:
            handler = _handler(scope["app"].exception_handlers, error)
            if handler is None:
                raise  # the server's own 500 (ServerErrorMiddleware), as for the route
            response = await handler(request, error)
        else:
            encoded = text.encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-length", str(len(encoded)).encode()),
                        (b"content-type", b"application/json"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": encoded})
            return
        await response(scope, receive, send)


def _checked(model: type[BaseModel], body: bytes) -> BaseModel | None:
    """The validated request, or None when the route must see it (not a JSON object, a key
    named twice, a field refused)."""
    try:
        document = json.loads(body, object_pairs_hook=routes.mark_repeats)
    except (ValueError, RecursionError):
        return None
    if type(document) is not dict or any(routes.holds_repeat(value) for value in document.values()):
        return None
    try:
        return model.model_validate(document)
    except ValidationError:
        return None


def _handler(handlers: dict[Any, Any], error: Exception) -> Any:
    """The app's handler for this error as Starlette's ExceptionMiddleware finds it (the
    nearest class in its MRO); None for those only the server's 500 handler takes."""
    for kind in type(error).__mro__:
        if kind is Exception:
            return None
        if kind in handlers:
            return handlers[kind]
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body already read, then the client's own messages."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
