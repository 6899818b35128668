"""Recent answers of the deterministic endpoints (plan, compare, solve), by canonical request.

A plan depends only on its request and the packaged constants, which are fixed while the
server runs, so the same request gets the same bytes: repeated queries (a permalink
opened again, a dashboard polling) skip the computation. Errors are never stored.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from planner.files import json_text


class AnswerCache:
    """A bounded least-recently-used map from canonical request to JSON text."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._answers: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def cached(self, kind: str, fields: dict[str, Any]) -> str | None:
        """The stored JSON text for this request, or None (nothing is computed)."""
        key = _key(kind, fields)
        with self._lock:
            text = self._answers.get(key)
            if text is not None:
                self._answers.move_to_end(key)
                self.hits += 1
            return text

    def answer(self, kind: str, fields: dict[str, Any], compute: Callable[[], Any]) -> str:
        """The JSON text of ``compute()`` for this request, computed once while cached."""
        text = self.cached(kind, fields)
        if text is not None:
            return text
        key = _key(kind, fields)
        text = json_text(compute())
        with self._lock:
            self.misses += 1
            self._answers[key] = text
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)
        return text


def _key(kind: str, fields: dict[str, Any]) -> str:
    return kind + "\0" + json.dumps(fields, sort_keys=True)
