"""`python -m scrofazero.serve.fish_messages PATH.json`: write the Fish protocol's JSON Schema
(fish/messages.py) to PATH. The command lives here because docs/protocol_fish.schema.json names
it in its own description, and that file must stay what the models generate."""

from __future__ import annotations

import sys

from scrofazero.serve.common.messages import write_schema
from scrofazero.serve.fish.messages import fish_schema_text

if __name__ == "__main__":
    write_schema(sys.argv, fish_schema_text, "scrofazero.serve.fish_messages")
