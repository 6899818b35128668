"""The documentation stands alone: a short README with a working table of contents, and
every relative link in README.md and docs/ reaching a file (and heading) of this
repository."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").rglob("*.md"))]

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
SETUP = (
    "python -m pip install -e '.[test]' && planner plan --model shuffle -k 1000 "
    "--alpha 0.1 --eps1 1 --eps2 0.25 --delta 1e-6\npython -m pytest -m 'not slow and not "
    "serial' -n 2 && python -m pytest -m 'serial and not slow' -n 0\n"
)


def prose(text: str) -> str:
    """The text without its fenced code blocks (a link inside code is not a link)."""
    return FENCE.sub("", text)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its words
    text = re.sub(r"[^\w\- ]", "", text.lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for heading in HEADING.findall(prose(path.read_text(encoding="utf-8"))):
        slug = anchor(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.add(slug if count == 0 else f"{slug}-{count}")
    return result


def relative_links(path: Path) -> list[str]:
    links = LINK.findall(prose(path.read_text(encoding="utf-8")))
    return [link for link in links if not re.match(r"[a-z][a-z0-9+.-]*:", link)]


def test_the_readme_is_short_and_keeps_the_two_setup_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert f"```bash\n{SETUP}```" in text  # exactly what .ci/run runs
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert all(line in ci.splitlines() for line in SETUP.splitlines())


def test_the_readme_has_a_table_of_contents_whose_anchors_exist() -> None:
    text = README.read_text(encoding="utf-8")
    contents = text.split("## Contents\n", 1)[1].split("\n## ", 1)[0]
    targets = re.findall(r"\]\(#([^)]+)\)", contents)
    assert len(targets) >= 4
    assert set(targets) <= anchors(README), set(targets) - anchors(README)
    sections = {anchor(h) for h in re.findall(r"^## (.+)$", prose(text), re.MULTILINE)}
    assert sections - {"contents"} <= set(targets)  # every section is listed


def test_every_relative_link_reaches_a_file_of_the_repository() -> None:
    broken = []
    for document in DOCUMENTS:
        for link in relative_links(document):
            target, _, fragment = link.partition("#")
            path = (document.parent / unquote(target)).resolve() if target else document
            where = f"{document.relative_to(ROOT)}: {link}"
            if ROOT not in path.parents and path != ROOT:
                broken.append(f"{where} (outside the repository)")
            elif not path.exists():
                broken.append(f"{where} (no such file)")
            elif fragment and path.suffix == ".md" and unquote(fragment) not in anchors(path):
                broken.append(f"{where} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_docs_name_nothing_outside_the_repository() -> None:
    for document in DOCUMENTS:
        assert "../shared" not in document.read_text(encoding="utf-8"), document


def test_the_user_docs_exist_and_the_readme_links_them() -> None:
    text = README.read_text(encoding="utf-8")
    for name in (
        "user-guide.md",
        "service.md",
        "method.md",
        "evidence.md",
        "json-schema.md",
        "architecture.md",
        "coverage.md",
        "operating-point.md",
    ):
        assert (ROOT / "docs" / name).is_file(), name
        assert f"(docs/{name})" in text, name


def test_the_anchor_rule_matches_githubs() -> None:
    assert anchor("Calibration: `planner calibrate`") == "calibration-planner-calibrate"
    assert anchor("Direct calibration at β below 1/3") == "direct-calibration-at-β-below-13"
    assert anchor("The exact search: `planner plan --exact`") == (
        "the-exact-search-planner-plan---exact"
    )
