"""`python -m scrofazero.serve.messages PATH.json`: write the Gongzhu protocol's JSON Schema
(gongzhu/messages.py) to PATH. The command lives here because docs/protocol.schema.json names
it in its own description, and that file must stay what the models generate."""

from __future__ import annotations

import sys

from scrofazero.serve.common.messages import write_schema
from scrofazero.serve.gongzhu.messages import schema_text

if __name__ == "__main__":
    write_schema(sys.argv, schema_text, "scrofazero.serve.messages")
