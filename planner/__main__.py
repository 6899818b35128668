"""``python -m planner …`` runs the CLI."""

from planner.cli import exit_with, main

exit_code = main()
# Under ``python -m``, CPython ends through Py_RunMain, which kills the process with
# SIGINT (exit status -2) whenever a KeyboardInterrupt escaped code run by ``exec`` or
# ``eval`` of a string at any time, even one the CLI then caught and reported ("aborted",
# 130): a Ctrl-C that lands inside a lazy import (scipy.stats builds its classes that way)
# did so. Running a string clears that record, so the exit code stays the CLI's own.
exec("None")
exit_with(exit_code)  # after Ctrl-C at once, as the ``planner`` command
