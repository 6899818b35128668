"""The command line's own checks of its arguments, before click parses them."""

from __future__ import annotations

from typing import Any

from planner.inputs import ALLOWED, InputError


def refuse_repeated_options(command: Any, args: list[str]) -> None:
    """An option that takes one value given twice (``-k 1000 -k 50``) is one line, as the
    service refuses a field named twice: click would silently keep the last.

    An option followed by another of the command's options instead of its value
    (``--eps2 -k 1000``) is one line naming the option that lacks its value: it had been
    read as ``-k`` given twice (``invalid k = '1000 and '``), or click took ``-k`` as the
    value. A value that merely starts with ``-`` (``--eps2 -1``) is a value, checked
    later.
    """
    subcommand = next((arg for arg in args if not arg.startswith("-")), None)
    chosen = getattr(command, "commands", {}).get(subcommand)
    if chosen is None or subcommand is None:
        return
    options = {
        opt
        for param in chosen.params
        if getattr(param, "param_type_name", "") == "option"
        for opt in (*param.opts, *getattr(param, "secondary_opts", ()))
    } | {"--help"}
    single = {
        opt: param
        for param in chosen.params
        # duck-typed: typer may carry its own copy of click's classes
        if getattr(param, "param_type_name", "") == "option"
        and not getattr(param, "multiple", False)
        and not getattr(param, "is_flag", False)
        for opt in param.opts
    }
    takes_value = {
        opt
        for param in chosen.params
        if getattr(param, "param_type_name", "") == "option"
        and not getattr(param, "is_flag", False)
        for opt in param.opts
    }
    given: dict[str, str] = {}
    rest = args[args.index(subcommand) + 1 :]
    index = 0
    while index < len(rest):
        token = rest[index]
        index += 1
        if token == "--":
            break
        flag, joined, attached = token.partition("=")
        if not flag.startswith("--") and len(token) > 2 and token[:2] in takes_value:
            flag, joined, attached = token[:2], "=", token[2:]  # a short option's -k50
        elif not flag.startswith("--"):
            flag, joined = token, ""
        if flag not in takes_value:
            continue
        if joined:
            value = attached
        else:
            following = rest[index] if index < len(rest) else None
            if following is not None and _option_name(following) in options:
                _missing_value(single.get(flag), flag, following)
            value = "" if following is None else following
            index += 1  # the value is no option of its own (``--eps2 -k``: not a -k)
        param = single.get(flag)
        if param is None or param.name is None:
            continue
        name = param.name.replace("_", "-")
        if name in given:
            raise InputError(name, f"{given[name]} and {value}", "given once (it appears twice)")
        given[name] = value


def _option_name(token: str) -> str:
    """The option a token names (``--k=5``: ``--k``; ``-k5``: ``-k``), or the token."""
    if token.startswith("--"):
        return token.partition("=")[0]
    return token[:2] if token.startswith("-") and len(token) > 2 else token


def _missing_value(param: Any, flag: str, following: str) -> None:
    """Refuse ``flag`` followed by another option instead of its value."""
    name = (param.name if param is not None and param.name else flag.lstrip("-")).replace("_", "-")
    allowed = ALLOWED.get(name, "a value")
    raise InputError(
        name, None, f"{allowed}, given right after {flag} (not the option {following})"
    )
