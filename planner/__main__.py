"""``python -m planner …`` runs the CLI."""

from planner.cli import run

run()
