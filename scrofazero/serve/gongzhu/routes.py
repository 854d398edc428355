"""The Gongzhu part of the web server, one FastAPI `APIRouter` per area, which app.py includes:
`tables_router` (the page, with a plain page for a URL it cannot serve, the options, the tables
and their seats, the `/ws` WebSocket of docs/protocol.md), `records_router` (the stored games
and matches: listings, replays, exports) and `review_router` (the reviews of a seat's moves).
No two routes answer one path, so the routers' order does not matter.

The reads of stored games and matches go through `StoredGames`, off the event loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fastapi import APIRouter, Request, WebSocket
from fastapi.datastructures import QueryParams
from fastapi.responses import FileResponse, PlainTextResponse, Response

from scrofazero.agents import PLAYERS
from scrofazero.serve.common.config import PlayConfig
from scrofazero.serve.common.limits import Limits, Reader, json_bytes
from scrofazero.serve.common.messages import PROTOCOL_VERSION
from scrofazero.serve.common.pages import problem_page, shown
from scrofazero.serve.common.protocol import ProtocolError
from scrofazero.serve.common.records import LIVE
from scrofazero.serve.common.sockets import (
    MAX_GAME_ID,
    check_status,
    client_address,
    closed_game,
    limited_body,
    page,
    page_limit,
    serve_socket,
)
from scrofazero.serve.common.web import HTTP_STATUS
from scrofazero.serve.gongzhu.hub import Hub
from scrofazero.serve.gongzhu.messages import Create, Created, seat_kinds
from scrofazero.serve.gongzhu.protocol import parse_claim, parse_client_message
from scrofazero.serve.gongzhu.records import Records, export_text, game_settled, replay_frames
from scrofazero.serve.gongzhu.reviews import Reviews

SEATS = ("0", "1", "2", "3")  # a seat as a URL's query names it


def replay_json(game: dict) -> bytes:
    return json_bytes(replay_frames(game))


def game_over(_records: Records, game: dict) -> bool:
    """Whether a game's replay or export is final: its moves, seats and scores no longer change
    once it is over, and neither shows the deal number (which waits for its match's end)."""
    return game["status"] not in LIVE


@dataclass(frozen=True)
class StoredGames:
    """The stored games and matches as the routes answer them: `records()` gives the records the
    app's lifespan opened, `reader` runs each read in a worker thread and keeps the answers of
    what is settled."""

    records: Callable[[], Records]
    reader: Reader

    def game_answer(self, game_id: int, shape, settled=game_settled) -> Callable:
        """A finished game's answer (`shape` of its record) and whether it is final
        (`settled(records, game)`), to be computed off the event loop."""
        def compute():
            game = closed_game(self.records().game, game_id)
            return shape(game), settled(self.records(), game)
        return compute

    async def answer(self, kind: str, game_id: int, shape, media: str = "application/json",
                     settled=game_settled) -> Response:
        body = await self.reader.answer((kind, game_id),
                                        self.game_answer(game_id, shape, settled))
        return Response(body, media_type=media)

    async def replay(self, game_id: int) -> bytes:
        """A game's replay, kept once the game is over, even while its match goes on."""
        return await self.reader.answer(("replay", game_id),
                                        self.game_answer(game_id, replay_json, game_over))

    def match(self, match_id: int) -> dict:
        """The match `match_id` (in a worker thread)."""
        match = self.records().match(match_id) if 0 < match_id <= MAX_GAME_ID else None
        if match is None:
            raise ProtocolError("not_found", f"no match {match_id}")
        return match

    def match_answer(self, match_id: int) -> tuple[bytes, bool]:
        match = self.match(match_id)
        return json_bytes(match), match["status"] not in LIVE

    async def match_replay(self, match_id: int) -> bytes:
        """The match and the replay of every hand of it that is over (a hand in play opens
        when it ends): each hand's replay is kept once it is over, so a match in play rebuilds
        none of its finished hands; the match's own record is kept once it is over."""
        head = await self.reader.answer(("match", match_id), lambda: self.match_answer(match_id))
        hands = [await self.replay(g["id"]) for g in json.loads(head)["games"]
                 if g["status"] not in ("waiting", "playing")]
        return b'{"match":' + head + b',"hands":[' + b",".join(hands) + b"]}"

    async def over_match(self, match_id: int) -> dict:
        """The match `match_id` once it is over (kept then); one in play is refused
        (in_play), as a game's review is."""
        match = json.loads(await self.reader.answer(("match", match_id),
                                                    lambda: self.match_answer(match_id)))
        if match["status"] in LIVE:
            raise ProtocolError("in_play", f"match {match_id} is still in play; its review "
                                           "opens when it ends")
        return match

    async def listing(self, method: str, limit: int | None, status: str | None, offset: int,
                      max_page_size: int) -> Response:
        """A page of the records' `method` listing (newest first), its query checked."""
        size = page_limit(limit, offset, max_page_size)
        check_status(status)
        rows = await self.reader.run(getattr(self.records(), method), size, status, offset)
        return Response(json_bytes(rows), media_type="application/json")


async def url_problem(params: QueryParams, hub: Callable[[], Hub],
                      stored: StoredGames) -> Response | None:
    """A plain page when the page's URL cannot be served (a replay or review id that is not a
    number or names no finished game, a table not on the server, a seat not 0..3); else None."""
    for kind, what in (("replay", "game"), ("review", "game"), ("match", "match")):
        if kind in params:
            return await stored_problem(kind, what, params, stored)
    if "table" in params:
        table, seat = params["table"], params.get("seat", "")
        if table not in hub().tables:
            return problem_page("No such table", f"There is no table '{shown(table)}' on this "
                                "server: it may have ended and closed, the server may have "
                                "restarted, or the link is mistyped.")
        if seat not in SEATS:
            return problem_page("No such seat", f"A table's seats are 0, 1, 2 and 3, not "
                                f"'{shown(seat)}': check the join link you were given.", 400)
    return None


async def stored_problem(kind: str, what: str, params: QueryParams,
                         stored: StoredGames) -> Response | None:
    """url_problem of a link to a stored `what` (game or match) by its `kind` (replay, review,
    match): a plain page when the id or seat is wrong or the game is missing or in play."""
    text = params[kind]
    if not text.isdecimal() or not 0 < int(text) <= MAX_GAME_ID:
        return problem_page(f"No such {what}", f"'{shown(text)}' is not a {what} number: a "
                            f"{kind} link reads /?{kind}=N, N a {what}'s number from the "
                            "lobby's list.", 400)
    if params.get("seat", "0") not in SEATS:
        return problem_page("No such seat", f"A game's seats are 0, 1, 2 and 3, not "
                            f"'{shown(params['seat'])}'.", 400)
    try:
        if kind == "match":
            await stored.reader.answer(("match", int(text)),
                                       lambda: stored.match_answer(int(text)))
        else:
            await stored.reader.answer(("game", int(text)),
                                       stored.game_answer(int(text), json_bytes))
    except ProtocolError as err:
        title = f"{what.capitalize()} {text} is still in play" \
            if err.code == "in_play" else f"No {what} {text}"
        return problem_page(title, f"{err.message}.", HTTP_STATUS.get(err.code, 400))
    return None


def options_answer(cfg: PlayConfig, hub: Hub) -> dict:
    """GET /api/options: the protocol's version, the seat kinds and bots, the server's
    settings a page shows."""
    return {"protocol": PROTOCOL_VERSION, "seat_kinds": list(seat_kinds()),
            "bots": [{"kind": s.name, "name": s.title, "about": s.about}
                     for s in PLAYERS.values()],
            "bot_names": {s.name: s.title for s in PLAYERS.values()},
            "default_bots": list(cfg.bots),
            "checkpoint": cfg.checkpoint, "thinking": cfg.thinking,
            "move_deadline_s": cfg.move_deadline_s,
            "reconnect_grace_s": cfg.reconnect_grace_s,
            "standard_deals": len(hub.standard_deals()),
            "max_page_size": cfg.max_page_size}


def tables_router(cfg: PlayConfig, hub: Callable[[], Hub], stored: StoredGames, static: Path,
                  limits: Limits) -> APIRouter:
    """GET / (the page), /api/options, POST and GET /api/tables, the claim of a seat and /ws;
    `hub()` gives the hub the app's lifespan made, `static` is the folder of the page's
    files."""
    router = APIRouter()

    @router.get("/")
    async def index(request: Request):
        problem = await url_problem(request.query_params, hub, stored)
        return problem or FileResponse(static / "index.html")

    @router.get("/api/options")
    async def options():
        return options_answer(cfg, hub())

    @router.post("/api/tables")
    async def create_table(request: Request):
        msg = parse_client_message(await limited_body(request))
        if not isinstance(msg, Create):
            raise ProtocolError("bad_message", "POST /api/tables takes a 'create' message")
        table, tokens = await hub().create_table(msg, client_address(request))
        return Created.of(table, tokens).model_dump(exclude={"v", "type"})

    @router.get("/api/tables")
    async def tables(offset: int = 0, limit: int | None = None, public: bool = False):
        """The live tables in the order they were made, a page at a time (public=true: only
        public tables with an open seat, what the lobby lists)."""
        live = (t for t in hub().tables.values() if t.status in ("waiting", "playing", "between")
                and (not public or (t.rules.public and t.open_seats())))
        return [t.info() for t in page(live, offset, limit, cfg.max_page_size)]

    @router.post("/api/tables/{table_id}/claim")
    async def claim(table_id: str, request: Request):
        asked = parse_claim(await limited_body(request))
        token = await hub().claim(table_id, asked.seat, asked.name)
        return {"seat": asked.seat, "token": token}

    @router.websocket("/ws")
    async def ws_endpoint(ws: WebSocket):
        await ws.accept()
        await serve_socket(ws, hub(), limits)

    return router


def records_router(stored: StoredGames, max_page_size: int) -> APIRouter:
    """GET /api/games and /api/matches (listings, newest first), a game, its replay and its
    export, a match and its replay."""
    router = APIRouter()

    @router.get("/api/games")
    async def games(limit: int | None = None, status: str | None = None, offset: int = 0):
        return await stored.listing("list_games", limit, status, offset, max_page_size)

    @router.get("/api/matches")
    async def matches(limit: int | None = None, status: str | None = None, offset: int = 0):
        return await stored.listing("list_matches", limit, status, offset, max_page_size)

    @router.get("/api/games/{game_id}")
    async def game(game_id: int):
        return await stored.answer("game", game_id, json_bytes)

    @router.get("/api/games/{game_id}/replay")
    async def replay(game_id: int):
        return Response(await stored.replay(game_id), media_type="application/json")

    @router.get("/api/games/{game_id}/export", response_class=PlainTextResponse)
    async def export(game_id: int):
        return await stored.answer("export", game_id, lambda g: export_text(g).encode(),
                                   "text/plain; charset=utf-8", settled=game_over)

    @router.get("/api/matches/{match_id}")
    async def match(match_id: int):
        body = await stored.reader.answer(("match", match_id),
                                          lambda: stored.match_answer(match_id))
        return Response(body, media_type="application/json")

    @router.get("/api/matches/{match_id}/replay")
    async def match_replay(match_id: int):
        return Response(await stored.match_replay(match_id), media_type="application/json")

    return router


def review_seat(seat: int) -> int:
    if not 0 <= seat < 4:
        raise ProtocolError("bad_message", f"seat must be 0..3, got {seat}")
    return seat


def review_router(stored: StoredGames, reviews: Callable[[], Reviews]) -> APIRouter:
    """GET /api/games/ID/review and /api/matches/ID/review; `reviews()` gives the reviews the
    app's lifespan made. A review in memory is answered at once; the rest (the record, a kept
    review, queueing one) is done in a worker thread."""
    router = APIRouter()

    @router.get("/api/games/{game_id}/review")
    async def game_review(game_id: int, seat: int, request: Request):
        """The review of `seat`'s moves in a finished game, queued by the first ask."""
        review_seat(seat)
        body = reviews().known(game_id, seat) if 0 < game_id <= MAX_GAME_ID else None
        if body is None:
            body = await stored.reader.run(reviews().game_answer, stored.records(), game_id,
                                           seat, client_address(request))
        return Response(body, media_type="application/json")

    @router.get("/api/matches/{match_id}/review")
    async def match_review(match_id: int, seat: int, request: Request):
        """The reviews of `seat` in the hands of a match that is over (a match still in play
        is refused, as a game's review is), and the match's summary."""
        review_seat(seat)
        match = await stored.over_match(match_id)
        body = await stored.reader.run(reviews().match_answer, stored.records(), match_id,
                                       [g["id"] for g in match["games"]], seat,
                                       client_address(request))
        return Response(body, media_type="application/json")

    return router
