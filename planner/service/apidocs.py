"""``/docs``: the interactive OpenAPI reference (Swagger UI), served offline.

FastAPI's own ``/docs`` loads Swagger UI from a CDN; here its files come from the
``fastapi-offline`` package (a dependency: it ships Swagger UI's script, style sheet and
icon) through ``/docs/assets/{name}``, so the page loads with no network. The
machine-readable description stays at ``/openapi.json``; its descriptions are written in
the code's docstrings (reST's double backticks), which :func:`markdown_descriptions`
turns into the Markdown Swagger UI renders.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response

router = APIRouter(include_in_schema=False)

ASSETS = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "favicon.png": "image/png",
}
"""The Swagger UI files ``/docs`` loads, and their media types."""

_REST_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)
_REST_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`]+)`")


def to_markdown(text: str) -> str:
    """reST inline markup as Markdown: ````code```` → ```code```, ``:func:`name``` →
    ```name```."""
    text = _REST_ROLE.sub(lambda match: f"`{match[1]}`", text)
    return _REST_LITERAL.sub(lambda match: f"`{match[1]}`", text)


def markdown_descriptions(spec: Any) -> Any:
    """The OpenAPI description with every ``description`` and ``summary`` in Markdown
    (changed in place, and returned); a loop, not recursion."""
    pending = [spec]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key in ("description", "summary") and isinstance(value, str):
                    item[key] = to_markdown(value)
                else:
                    pending.append(value)
        elif isinstance(item, list):
            pending.extend(item)
    return spec


def install(app: FastAPI) -> None:
    """Serve ``app``'s OpenAPI description with Markdown descriptions (built once, on a
    worker thread: see :func:`openapi_json`)."""
    build = app.openapi
    lock = threading.Lock()

    def openapi() -> dict[str, Any]:
        with lock:  # two first requests at once: one build
            if app.openapi_schema is None:
                app.openapi_schema = markdown_descriptions(build())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


@router.api_route("/openapi.json", methods=["GET", "HEAD"])
def openapi_json(request: Request) -> JSONResponse:
    """The OpenAPI description. A plain function, so Starlette runs it on a worker thread:
    FastAPI's own ``/openapi.json`` is a coroutine, whose first answer built the description
    on the event loop (0.3 s of CPU; a hostile run's ``/v1/health`` probe waited 2.7 s
    behind it on the loaded 2-core machine, in each of ``planner serve --workers 2``'s
    processes). The app is made with ``openapi_url=None``, this route in its place."""
    return JSONResponse(request.app.openapi())


def _asset_folder() -> Path:
    import fastapi_offline

    return Path(fastapi_offline.__file__).parent / "static"


@router.get("/docs", response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    """The interactive API reference (Swagger UI, offline: no CDN)."""
    return get_swagger_ui_html(
        openapi_url="/openapi.json",
        title=f"{request.app.title} — API reference",
        swagger_js_url="/docs/assets/swagger-ui-bundle.js",
        swagger_css_url="/docs/assets/swagger-ui.css",
        swagger_favicon_url="/docs/assets/favicon.png",
        oauth2_redirect_url=None,
        # no badge from the public validator (a request off this server)
        swagger_ui_parameters={"validatorUrl": None},
    )


@router.get("/docs/assets/{name}")
def asset(name: str) -> Response:
    """Swagger UI's script, style sheet and icon (from the fastapi-offline package)."""
    if name not in ASSETS:
        return Response("not found", status_code=404, media_type="text/plain")
    return FileResponse(
        _asset_folder() / name,
        media_type=ASSETS[name],
        headers={"Cache-Control": "max-age=3600"},
    )
