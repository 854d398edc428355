"""docs/protocol.md as the tests read it: its text, its Fish section, and its message tables,
to hold the document and the message models (and the bots written from the document) to each
other."""

from __future__ import annotations

import re
from pathlib import Path

PROTOCOL_MD = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
# in every message, or every answer (`in_reply_to`, `id`); docs/protocol.md says so once, not
# per row
ENVELOPE = {"v", "type", "in_reply_to", "id"}


def protocol_text() -> str:
    """The whole of docs/protocol.md."""
    return PROTOCOL_MD.read_text()


def fish_section(text: str) -> str:
    """The document from its "## Fish" heading on (the Fish protocol)."""
    return text[text.index("## Fish"):]


def doc_table(text: str, header: str) -> dict[str, set[str]]:
    """Rows of the markdown table under `header`: first cell's `name` -> the `fields` of its
    third cell (backticked words outside parentheses: those inside describe a field)."""
    lines = text[text.index(header):].splitlines()[2:]
    rows = {}
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = re.fullmatch(r"`(\w+)`", cells[0]).group(1)
        top = cells[2] if len(cells) > 2 else ""
        while re.search(r"\([^()]*\)", top):
            top = re.sub(r"\([^()]*\)", "", top)
        rows[name] = set(re.findall(r"`(\w+)`", top))
    return rows


def model_fields(model) -> set[str]:
    """A message model's fields as its table row lists them: all but the envelope's."""
    return set(model.model_fields) - ENVELOPE
