"""`python -m scrofazero.serve.messages PATH.json`: write the Gongzhu protocol's JSON Schema
(gongzhu/messages.py) to PATH. The command lives here because docs/protocol.schema.json names
it in its own description, and that file must stay what the models generate."""

from __future__ import annotations

import sys

from scrofazero.serve.gongzhu.messages import schema_text

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m scrofazero.serve.messages PATH.json")
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write(schema_text())
