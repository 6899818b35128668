"""Bearer-token access: required on every route but ``/v1/health`` when a token is set.

The token comes in an ``Authorization: Bearer …`` header (scripts) or, for the web page,
in a cookie that ``GET /?token=…`` sets once. Comparison is constant-time.
"""

from __future__ import annotations

import hmac

from fastapi import HTTPException, Request

COOKIE = "planner_token"


def authorized(request: Request) -> bool:
    expected: str | None = request.app.state.service.token
    if expected is None:
        return True
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not given:
        given = request.cookies.get(COOKIE, "")
    return token_matches(given, expected)


def token_matches(given: str, expected: str) -> bool:
    """Is ``given`` the server's token (constant-time; surrounding blanks ignored)?"""
    return hmac.compare_digest(given.strip().encode(errors="replace"), expected.encode())


async def require_token(request: Request) -> None:
    """FastAPI dependency (async: no thread hop): 401 unless the request has the token."""
    if not authorized(request):
        raise HTTPException(
            status_code=401,
            detail="invalid token: must be the server's --token, as Authorization: Bearer <token>",
            headers={"WWW-Authenticate": "Bearer"},
        )
