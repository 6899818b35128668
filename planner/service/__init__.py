"""``planner serve``: the planner as an HTTP API and a web calculator (FastAPI on uvicorn).

:func:`create_app` builds the application; :mod:`planner.service.server` runs it.
"""

from planner.service.app import create_app

__all__ = ["create_app"]
