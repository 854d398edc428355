"""The JSON answers of the HTTP API (docs/protocol.md) as pydantic models: what both games'
answers share, and how a game's answers become a JSON Schema.

The models describe what a bot reads; the routes build their answers from the records (a cache
keeps finished ones as bytes), and a test holds real answers of a running server to these
models. Every model forbids fields it does not name and coerces nothing (a seat "0" is not a
seat), so an answer that grew an undocumented field, or one of the wrong JSON type, fails.
Times are ISO 8601 with their UTC offset. docs/http.schema.json is both games' answers written
out (serve/http_schema.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field
from pydantic.json_schema import models_json_schema

from scrofazero.serve.common.messages import Error, Status

Time = Annotated[AwareDatetime, Field(description="ISO 8601 with its UTC offset, e.g. "
                                                  "2026-12-07T00:15:00.123456+00:00")]


class Answer(BaseModel):
    """A JSON object of an answer: exactly its fields, each of its JSON type."""

    model_config = ConfigDict(extra="forbid", strict=True)


class StoredSeat(Answer):
    seat: int
    kind: str = Field(description="open or a bot's kind")
    name: str


class StoredGame(Answer):
    """The first fields of a stored game (either game's)."""

    id: int
    table: str
    status: Status
    created_at: Time
    finished_at: Time | None = Field(description="when it ended; null while in play")


class TableCreatedAnswer(Answer):
    """POST /api/tables, POST /api/fish/tables: the created message without v and type."""

    table: str
    game_id: int
    tokens: dict[str, str] = Field(description="seat -> token, one per open seat")


def answers_schema(answers: Mapping[str, type[BaseModel]], title: str, description: str) -> dict:
    """The JSON Schema of HTTP answers (`answers`: "METHOD /path" -> its model): every model,
    and a refusal's `Error`, in `$defs`; `endpoints` names each path's definition."""
    models: list[type[BaseModel]] = [*answers.values(), Error]
    refs, defs = models_json_schema([(m, "validation") for m in models],
                                    ref_template="#/$defs/{model}")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": title, "description": description,
            "endpoints": {path: refs[(model, "validation")]["$ref"]
                          for path, model in answers.items()},
            "$defs": defs["$defs"]}
