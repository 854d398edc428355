"""What both table protocols check of a client frame (docs/protocol.md): its size, that it is
JSON nested no deeper than MAX_DEPTH, its version, and its model (`parse_frame`, given the
protocol's messages and refusal). `ProtocolError` is the refusal of /ws and of every HTTP route:
the error code and the one-line message sent back to that client.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ValidationError

from scrofazero.serve.common.messages import (
    ERROR_CODES,
    PROTOCOL_VERSION,
    ClientMessage,
    Error,
    echo,
)

MAX_MESSAGE_BYTES = 4096  # a client message above this is refused as too_large
MAX_DEPTH = 16  # arrays and objects nested deeper than this are refused as bad_json


class Refusal(Exception):
    """A client message refused, as either protocol raises it (ProtocolError, fish/messages.py's
    FishProtocolError): its error `code`, its one-line `message`, and `to_message()`, the
    error message sent back."""

    code: str
    message: str

    def to_message(self) -> dict:
        raise NotImplementedError


class ProtocolError(Refusal):
    """A message refused; `code` is one of ERROR_CODES. Nothing changes on the server."""

    def __init__(self, code: str, message: str):
        assert code in ERROR_CODES, code
        super().__init__(message)
        self.code = code
        self.message = message

    def to_message(self) -> dict:
        return Error(code=self.code, message=self.message).model_dump()


def first_problem(kind: str, model: type[BaseModel], err: ValidationError) -> str:
    """The first problem of a refused message, naming its field as the field's description
    says what it must be."""
    problem = err.errors()[0]
    name = str(problem["loc"][0]) if problem["loc"] else ""
    if problem["type"] == "value_error":  # a validator's own sentence
        return str(problem["ctx"]["error"])
    what = model.model_fields[name].description if name in model.model_fields else "valid"
    if problem["type"] == "missing":
        return f"'{kind}' needs '{name}' ({what})"
    return f"'{name}' must be {what}, got {echo(problem['input'])}"[:300]


def parse_frame(text: str | bytes, messages: dict, error=ProtocolError) -> ClientMessage:
    """One client frame -> its checked message (`messages`: type -> model, as CLIENT_MESSAGES).
    A refusal is raised as `error` (code, message): the protocol's ProtocolError (nothing is
    changed)."""
    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > MAX_MESSAGE_BYTES:
        raise error("too_large", f"message of {size} bytes; the limit is {MAX_MESSAGE_BYTES}")
    msg = load_json(text, error)
    if not isinstance(msg, dict):
        raise error("bad_message", "a message must be a JSON object")
    version = msg.get("v", PROTOCOL_VERSION)
    if isinstance(version, bool) or version != PROTOCOL_VERSION:
        raise error("unsupported_version", f"protocol version {version!r}; this server speaks "
                                           f"{PROTOCOL_VERSION}")
    if "type" not in msg:
        raise error("bad_message", f"a message needs 'type', one of {', '.join(messages)}")
    kind = msg.get("type")
    model = messages.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise error("bad_message", f"unknown message type {kind!r}; expected "
                                   f"{', '.join(messages)}")
    try:
        return model.model_validate(msg)
    except ValidationError as err:
        raise error("bad_message", first_problem(str(kind), model, err)) from None


def load_json(text: str | bytes, error=ProtocolError):
    """JSON text (or its UTF-8 bytes) -> its value. Refused as bad_json (raised as `error`)
    when it is not UTF-8, not JSON, or nested deeper than MAX_DEPTH (checked before parsing)."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        depth = nesting_depth(text)
        if depth > MAX_DEPTH:
            raise error("bad_json", f"JSON nested {depth} deep; the limit is {MAX_DEPTH}")
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as err:
        raise error("bad_json", f"not JSON: {err}") from None


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON text (brackets inside strings do not
    count), found without parsing, so that deep input cannot exhaust the parser's stack."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest
