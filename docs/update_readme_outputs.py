"""Re-run every command shown in the documentation and put its real output back in place.

    python docs/update_readme_outputs.py            # rewrite the files (each atomically)
    python docs/update_readme_outputs.py --check    # exit 1 if an output is out of date

The documentation is README.md and every markdown file under docs/. A shown command is a
```text block whose first line starts with ``$ planner``; it runs in the repository's
root at a terminal width of 80 columns, and the block becomes the command followed by
what it printed (the timing of ``validate`` varies from run to run, so --check ignores
the seconds on its heading line).
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


def documents() -> list[Path]:
    """README.md and every markdown file under docs/, in a fixed order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


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


def updated(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        command = match.group(1)
        output = run(command)
        return f"```text\n{command}\n{output.rstrip()}\n```"

    return BLOCK.sub(replace, text)


def write(path: Path, text: str) -> None:
    folder = path.parent
    with tempfile.NamedTemporaryFile("w", dir=folder, delete=False, encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(handle.name, path.stat().st_mode)
    os.replace(handle.name, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    stale: list[str] = []
    for path in documents():
        before = path.read_text(encoding="utf-8")
        if not BLOCK.search(before):
            continue
        after = updated(before)
        name = str(path.relative_to(ROOT))
        if args.check:
            if SECONDS.sub("", before) != SECONDS.sub("", after):
                stale.append(name)
        elif after != before:
            write(path, after)
            print(f"rewrote {name}")
        else:
            print(f"unchanged {name}")
    if args.check:
        if stale:
            print("outputs are out of date in " + ", ".join(stale))
        else:
            print("README and docs outputs are current")
        raise SystemExit(1 if stale else 0)


if __name__ == "__main__":
    main()
