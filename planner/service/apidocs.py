"""``/docs``: the API's reference, rendered on the server from the OpenAPI description.

FastAPI's own Swagger page loads its script from a CDN; this one is plain HTML built from
``app.openapi()`` (the same request types), so it works offline. The machine-readable
description stays at ``/openapi.json``.
"""

from __future__ import annotations

from html import escape
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)


def _type(schema: dict[str, Any]) -> str:
    if "anyOf" in schema:
        return " | ".join(_type(option) for option in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " | ".join(str(value) for value in schema["enum"])
    if "const" in schema:
        return repr(schema["const"])
    return str(schema.get("type", "any"))


def _fields(schema: dict[str, Any]) -> str:
    required = set(schema.get("required", []))
    rows = []
    for name, field in schema.get("properties", {}).items():
        default = "" if name in required else f" (default {field.get('default')!r})"
        rows.append(
            f"<tr><th scope='row'><code>{escape(name)}</code></th>"
            f"<td>{escape(_type(field))}</td><td>{'yes' if name in required else 'no'}</td>"
            f"<td>{escape(str(field.get('description', '')))}{escape(default)}</td></tr>"
        )
    return (
        "<table class='reference'><thead><tr><th scope='col'>field</th><th scope='col'>type</th>"
        "<th scope='col'>required</th><th scope='col'>meaning</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def render(spec: dict[str, Any]) -> str:
    """The reference page: every operation, its parameters and request body fields."""
    schemas = spec.get("components", {}).get("schemas", {})
    sections = []
    for path, operations in spec.get("paths", {}).items():
        for method, operation in operations.items():
            parts = [f"<h2><code>{method.upper()} {escape(path)}</code></h2>"]
            description = operation.get("description") or operation.get("summary", "")
            parts.append(f"<p>{escape(description)}</p>")
            parameters = operation.get("parameters", [])
            if parameters:
                items = "".join(
                    f"<li><code>{escape(p['name'])}</code> ({escape(p.get('in', ''))}, "
                    f"{escape(_type(p.get('schema', {})))})</li>"
                    for p in parameters
                )
                parts.append(f"<p>Parameters:</p><ul>{items}</ul>")
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is not None:
                reference = body.get("schema", {}).get("$ref", "")
                name = reference.rsplit("/", 1)[-1]
                if name in schemas:
                    parts.append(f"<p>JSON body ({escape(name)}):</p>{_fields(schemas[name])}")
            sections.append("<section>" + "".join(parts) + "</section>")
    title = escape(spec.get("info", {}).get("title", "API"))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} — API reference</title>
<link rel="stylesheet" href="/static/calculator.css"></head>
<body><main><h1>{title} — API reference</h1>
<p>Every answer is the JSON document of the CLI's <code>--json</code>. Errors are
<code>{{"error": "&lt;one line&gt;", "parameter": "&lt;name&gt;"}}</code> with a 4xx status.
Machine-readable: <a href="/openapi.json">/openapi.json</a>. <a href="/">Calculator</a>.</p>
{"".join(sections)}
</main></body></html>
"""


@router.get("/docs", response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    """The API reference (offline: no CDN)."""
    return HTMLResponse(render(request.app.openapi()))
