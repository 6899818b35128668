"""The one error for a bad parameter, shared by every layer (``planner.inputs`` re-exports
it): a ``Setting("quantum", …)`` is refused like a ``--model quantum``."""

from __future__ import annotations

ALLOWED: dict[str, str] = {}
"""Each parameter's allowed range, as the one line words it (filled by ``planner.inputs``)."""


class InputError(ValueError):
    """A parameter outside its allowed range; ``str()`` is the one line shown to users."""

    def __init__(self, parameter: str, value: object, allowed: str | None = None) -> None:
        self.parameter = parameter
        self.value = value
        self.allowed = allowed or ALLOWED.get(parameter, "a valid value")
        if value is None:  # not "invalid delta = None"
            super().__init__(f"missing {parameter}: must be {self.allowed}")
        else:
            super().__init__(f"invalid {parameter} = {shown(value)}: must be {self.allowed}")

    def __reduce__(self) -> tuple[type[InputError], tuple[str, object, str]]:
        """Rebuilt from its three fields, so that it crosses a process pool intact (the
        default pickles ``args``, one message, which ``__init__`` does not take)."""
        return (type(self), (self.parameter, self.value, self.allowed))


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut in the middle beyond ``limit`` characters (one short line)."""
    try:
        text = repr(value)
    except ValueError:  # an int too long to print
        text = f"<{type(value).__name__} too large to print>"
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-limit // 2 :]}"
