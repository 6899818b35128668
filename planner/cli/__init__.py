"""The ``planner`` command line: a thin typer layer over :mod:`planner.api`.

Every bad input ends in one line ``error: …`` naming the parameter and its allowed
range, exit code 2, no traceback.

A module per command group: :mod:`~planner.cli.planning` (plan, compare, explain),
:mod:`~planner.cli.sweeping` (sweep, plot), :mod:`~planner.cli.batching` (batch),
:mod:`~planner.cli.solving` (solve), :mod:`~planner.cli.powering` (power),
:mod:`~planner.cli.validating` (validate),
:mod:`~planner.cli.calibrating` (calibrate) and :mod:`~planner.cli.serving` (serve); the
options they share are in :mod:`~planner.cli.options`, how they print in
:mod:`~planner.cli.output`. This module builds the app from their functions and runs it
(:func:`main`). Every command imports what it runs (the planner, rich, sympy, …) inside
its function, so ``planner plan`` starts without the other commands' modules.

No ``from __future__ import annotations`` in this package: typer reads every command's
signature each time it builds the CLI, and string annotations would be evaluated (twice)
on every start; as objects they are built once, at import.
"""

import errno
import io
import os
import sys
from typing import Annotated, Any, NoReturn

import typer

from planner.argv import refuse_repeated_options
from planner.cli import (
    batching,
    calibrating,
    planning,
    powering,
    serving,
    solving,
    sweeping,
    validating,
)
from planner.inputs import InputError
from planner.pipes import EXIT_CODES_HELP
from planner.startup import interrupted, started

_USAGE_ERROR: type[Exception] = typer.BadParameter.__mro__[1]
"""click's UsageError, from wherever this typer takes click (vendored or not)."""

_APP_OPTIONS: dict[str, Any] = dict(
    add_completion=False,
    help="Sample-size planner for private closeness testing under heterogeneous privacy. "
    + EXIT_CODES_HELP,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: [plot], [[scenario]] and 20log stay as written
)


def _show_version(value: bool) -> None:
    if value:
        from planner.validate import code_version

        typer.echo(f"planner {code_version()}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Sample-size planner for private closeness testing under heterogeneous privacy."""


COMMANDS = (  # the order ``planner --help`` lists them in: typer keeps it
    planning.plan,
    planning.compare,
    sweeping.sweep,
    sweeping.plot,
    batching.batch,
    planning.explain,
    solving.solve,
    powering.power,
    validating.validate,
    calibrating.calibrate,
    serving.serve,
)
"""Every command's function; its name is the command's."""


def build_app(only: str | None = None) -> typer.Typer:
    """The typer app of every command, or of the command named ``only`` alone.

    ``planner plan …`` builds just ``plan``: typer turns each command's signature into
    click options at every start, about 1 ms a command. The app keeps its root callback, so
    it stays a group whatever it holds (``planner plan --help`` reads as with every
    command)."""
    built = typer.Typer(**_APP_OPTIONS)
    built.callback()(_root)
    for function in COMMANDS:
        if only is None or function.__name__ == only:
            built.command()(function)
    return built


app = build_app()
"""The whole CLI (``planner --help`` lists it; tests drive it with typer's runner)."""


def _command(args: list[str] | None = None) -> Any:
    """The click command typer builds, its options' text taken as typed: of the command
    ``args`` name first alone where they name one (:func:`build_app`), else of them all.

    typer (0.2x) coerces every option through a pydantic ``TypeAdapter``: importing
    pydantic and building the adapters was a third of ``planner plan``'s start-up
    (docs/architecture.md, "Speed"). The options of this CLI are raw text that
    :mod:`planner.inputs` checks itself, and flags; typer's adapter returns a ``str``
    option's text and a flag's bool unchanged, so a value already of its option's type
    (``str`` or ``bool``) is kept as it is, and anything else (paths, lists, a flag given
    text) goes through typer's own coercion, as does every option of a typer without
    these internals.
    """
    named = args[0] if args else None
    only = named if any(f.__name__ == named for f in COMMANDS) else None
    command = typer.main.get_command(app if only is None else build_app(only))
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:  # pragma: no cover - another typer: its own coercion
        return command

    class AsTyped(RuntimeParam):
        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if type(value) is self.annotation:
                return value
            own = build_runtime_param(param.type_descriptor)
            return own._coerce_value(value, param=param, ctx=ctx)

    for each in (command, *getattr(command, "commands", {}).values()):
        # the context only names the help option, which click creates here once
        for param in each.get_params(each.context_class(each)):
            described = getattr(param, "type_descriptor", None)
            if (
                described is not None
                and described.annotation in (str, bool)
                and described.file_annotation is None
                and described.parameter_info.parser is None
                and getattr(param, "_runtime_param", False) is None
            ):
                param._runtime_param = AsTyped(described.parameter_info, described.annotation)
    return command


class _ClosedOutput(io.TextIOBase):
    """Standard output when the process started without one: writing to it is the
    ``OSError`` :func:`main` turns into one line ("cannot write standard output")."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def isatty(self) -> bool:
        return False


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app and turn every input error into one line and exit 2."""
    args = sys.argv[1:] if argv is None else argv
    if sys.stderr is None:  # started with standard error closed (2>&-): nowhere to say why
        return 2
    if sys.stdout is None:  # closed (>&-): a command writing only to --output still runs
        sys.stdout = _ClosedOutput()
    for stream in (sys.stdout, sys.stderr):  # an ASCII-only locale: α as \u03b1, no crash
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    started()  # from here on, Ctrl-C is this function's KeyboardInterrupt
    try:
        code = _run_command(args)
    except (Exception, SystemExit):
        if not interrupted():
            raise
        code = 130  # a Ctrl-C a library turned into another exception: still Ctrl-C
    if code == 130 or interrupted():
        sys.stderr.write("aborted\n")
        return 130
    return code


def _usage_line(error: Any) -> str:
    """click's line for a usage error; a missing option in the planner's own words, with
    its allowed range (click's "Missing option '--model' / '-m'." names none)."""
    param = getattr(error, "param", None)
    if type(error).__name__ == "MissingParameter" and param is not None and param.opts:
        from planner.inputs import ALLOWED

        name = max(param.opts, key=len)
        allowed = ALLOWED.get(name.lstrip("-"))
        return f"missing {name}: must be given" + (f" ({allowed})" if allowed else "")
    return str(error.format_message())


def _run_command(args: list[str]) -> int:
    """Run the command; every input error is one line (exit 2), Ctrl-C is 130."""
    try:
        # what ``app(...)`` does (its exception hook only prettifies, and that is off)
        command = _command(args)
        refuse_repeated_options(command, args)
        result = command(args=args or ["--help"], standalone_mode=False, prog_name="planner")
        if result == 130:  # typer turns Ctrl-C into exit code 130, silently
            raise KeyboardInterrupt
    except InputError as error:
        sys.stderr.write(f"error: {error}\n")
        return 2
    except SystemExit as error:  # click's and rich's exit 1 on a broken pipe
        from planner.pipes import broken_pipe, is_broken_pipe

        if not is_broken_pipe(error):
            raise
        return broken_pipe()  # stdout's reader went away (| head): its own exit code
    except OSError as error:  # e.g. --output into a folder that does not exist
        where = "standard output" if error.filename is None else error.filename
        sys.stderr.write(f"error: cannot write {where}: {error.strerror or error}\n")
        return 2
    except _USAGE_ERROR as error:
        sys.stderr.write(f"error: {_usage_line(error)}\n")
        return 2
    except typer.Exit as error:
        return error.exit_code
    except (typer.Abort, KeyboardInterrupt):
        return 130
    return result if isinstance(result, int) else 0


def exit_with(code: int) -> NoReturn:
    """End the process with :func:`main`'s code.

    After Ctrl-C ("aborted", 130) the process ends at once: the interpreter's shutdown
    would join an interrupted worker pool's management thread, whose pipes are closed by
    then ("Exception ignored … Bad file descriptor" on stderr, seen under load).

    Otherwise, where no other thread is left (no server, cluster or pool), the objects
    alive are frozen out of the garbage collector (``gc.freeze``) before the interpreter's
    shutdown: its last collections walked every object numpy, typer and the planner made,
    a fifth of ``planner plan``'s wall time (19 ms of 25 ms of shutdown). Exit handlers
    still run and objects still go as their references drop; only cycles are left to the
    operating system, which takes the whole process's memory anyway."""
    import gc
    import threading

    from planner.pipes import flushed

    code = flushed(code)  # a broken pipe met at the last flush: 141, not a warning
    if code == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    if threading.active_count() == 1:
        gc.freeze()
    sys.exit(code)


def run() -> None:
    """The ``planner`` command."""
    exit_with(main())
