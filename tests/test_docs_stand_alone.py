"""The repository stands alone: nothing cites a specification kept outside it.

Invariants: no file of scrofazero/, tests/, benchmarks/, docs/, configs/, models/ or README.md
names an outside spec (gongzhu.md, a bare fish.md / tiny_crew.md / architecture.md / style.md
that is not the project's own docs/ file, a path into shared/docs or ../shared, "the doc");
every "docs/rules.md section N" (or "sections N-M", "sections N and M") cited there is a
numbered "## N." heading of docs/rules.md, and every rules.md#anchor link names one of them.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["scrofazero", "tests", "benchmarks", "docs", "configs", "models", "README.md"]
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".txt", ".toml", ".sh", ".html", ".js", ".css"}
# Specs that live outside the repository: a bare name not preceded by a path or a link bracket
# (docs/fish.md, [fish.md](fish.md) and (fish.md) are the project's own documents).
OUTSIDE = re.compile(
    r"gongzhu\.md"
    r"|(?<![\w/\[(])(?:fish|tiny_crew|architecture|style)\.md"
    r"|shared/docs/|\.\./shared"
    r"|\bthe doc\b",
    re.IGNORECASE,
)
CITATION = re.compile(r"(?<![\w/])(?:docs/)?rules\.md sections? (\d+(?:\s*(?:-|,|and)\s*\d+)*)")
ANCHOR = re.compile(r"\]\((?:docs/)?rules\.md#([\w-]+)\)")
HEADING = re.compile(r"^## (\d+)\. (.+)$", re.MULTILINE)
THIS = Path(__file__).resolve()


def _files():
    for name in SCANNED:
        path = ROOT / name
        paths = [path] if path.is_file() else sorted(path.rglob("*"))
        for p in paths:
            if p.is_file() and p.suffix in SUFFIXES and p.resolve() != THIS \
                    and "__pycache__" not in p.parts:
                yield p


def _lines(pattern: re.Pattern):
    """(file:line, match) of every match of `pattern` in the scanned files."""
    for path in _files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            yield f"{path.relative_to(ROOT)}:{line}", match


def _cited_sections(spec: str) -> list[int]:
    """Section numbers of "3", "2-4", "11 and 13", "17, 18": ranges expanded."""
    out: list[int] = []
    for part in re.split(r"\s*(?:,|and)\s*", spec):
        low, _, high = part.partition("-")
        out += list(range(int(low), int(high or low) + 1))
    return out


def _slug(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _headings() -> dict[int, str]:
    text = (ROOT / "docs" / "rules.md").read_text()
    return {int(n): title for n, title in HEADING.findall(text)}


def test_no_outside_spec_is_cited():
    found = [f"{where}: {m.group(0)!r}" for where, m in _lines(OUTSIDE)]
    assert not found, "cites a spec outside the repository:\n" + "\n".join(found)


def test_rules_sections_are_numbered_in_order():
    numbers = list(_headings())
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 19


def test_every_cited_section_exists():
    headings = _headings()
    cited = [(where, n) for where, m in _lines(CITATION) for n in _cited_sections(m.group(1))]
    assert len(cited) > 40  # the code cites the rules throughout
    missing = [f"{where}: section {n}" for where, n in cited if n not in headings]
    assert not missing, "docs/rules.md has no such section:\n" + "\n".join(missing)


def test_every_rules_anchor_exists():
    slugs = {_slug(f"{n}. {title}") for n, title in _headings().items()}
    links = list(_lines(ANCHOR))
    assert links
    missing = [f"{where}: #{m.group(1)}" for where, m in links if m.group(1) not in slugs]
    assert not missing, "no such heading in docs/rules.md:\n" + "\n".join(missing)


@pytest.mark.parametrize("text,bad", [
    ("follows gongzhu.md section 3", True),
    ("see shared/docs/fish.md", True),
    ("(../shared/data/x.txt)", True),
    ("as the doc says", True),
    ("tiny_crew.md section 2", True),
    ("docs/fish.md and [fish.md](fish.md)", False),
    ("the docstring of docs/tiny_crew.md", False),
])
def test_outside_pattern(text, bad):
    assert bool(OUTSIDE.search(text)) == bad


def test_cited_sections_parse():
    assert _cited_sections("2-4") == [2, 3, 4]
    assert _cited_sections("11 and 13") == [11, 13]
    assert _slug("6. Duplicate evaluation, WPG and the matrix") == \
        "6-duplicate-evaluation-wpg-and-the-matrix"
