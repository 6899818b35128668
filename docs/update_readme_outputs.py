"""Re-run every command shown in README.md and put its real output back in place.

    python docs/update_readme_outputs.py            # rewrite README.md (atomically)
    python docs/update_readme_outputs.py --check    # exit 1 if an output is out of date

A shown command is a ```text block whose first line starts with ``$ planner``; it runs in
the repository's root at a terminal width of 80 columns, and the block becomes the
command followed by what it printed (the timing of ``validate`` varies from run to run,
so --check ignores the seconds on its heading line).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```text\n(\$ planner [^\n]*)\n(.*?)```", re.DOTALL)
SECONDS = re.compile(r"\d+\.\d+ s\b")


def run(command: str) -> str:
    environment = {**os.environ, "COLUMNS": "80", "TERM": "dumb", "NO_COLOR": "1"}
    arguments = shlex.split(command.removeprefix("$ "))
    done = subprocess.run(
        [sys.executable, "-m", *arguments],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    printed = done.stdout + done.stderr
    return "\n".join(line.rstrip() for line in printed.splitlines())  # rich pads its lines


def updated(readme: str) -> str:
    def replace(match: re.Match[str]) -> str:
        command = match.group(1)
        output = run(command)
        return f"```text\n{command}\n{output.rstrip()}\n```"

    return BLOCK.sub(replace, readme)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    path = ROOT / "README.md"
    before = path.read_text(encoding="utf-8")
    after = updated(before)
    if args.check:
        stale = SECONDS.sub("", before) != SECONDS.sub("", after)
        print("README outputs are out of date" if stale else "README outputs are current")
        raise SystemExit(1 if stale else 0)
    with tempfile.NamedTemporaryFile("w", dir=ROOT, delete=False, encoding="utf-8") as handle:
        handle.write(after)
    os.chmod(handle.name, path.stat().st_mode)
    os.replace(handle.name, path)
    print(f"rewrote {path}")


if __name__ == "__main__":
    main()
