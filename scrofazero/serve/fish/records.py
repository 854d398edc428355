"""Every Fish game kept in the records database, next to the Gongzhu games (the same declarative
Base, common/records.py's, so one `create_all` makes every table): fish_games, fish_seats,
fish_moves.

The server writes a game when its table opens, each move as it is made and the result when it
ends. `fish_replay` and `fish_export` rebuild a game on the rules engine from its deal and moves
alone and refuse a record the engine does not reproduce (a move it calls illegal, or an outcome
other than the recorded one).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import cast

from sqlalchemy import (
    Boolean,
    CursorResult,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    insert,
    select,
    update,
)
from sqlalchemy.orm import Mapped, Session, mapped_column, relationship, selectinload

from scrofazero.games.fish.cards import card_code, card_id
from scrofazero.games.fish.rules import FishState, IllegalMove, Params
from scrofazero.games.fish.transcripts import Transcript, write_transcript
from scrofazero.serve.common.records import (
    Base,
    GameColumns,
    SeatColumns,
    game_head,
    iso_time,
    now,
    seat_list,
)


class FishGame(GameColumns, Base):
    __tablename__ = "fish_games"
    num_players: Mapped[int] = mapped_column(Integer)
    calls: Mapped[str] = mapped_column(String(16))  # rules.CALL_MODES
    first_player: Mapped[int] = mapped_column(Integer)
    seed: Mapped[str | None] = mapped_column(String(24), nullable=True)  # the deal's seed, if any
    deal: Mapped[str] = mapped_column(Text)  # JSON: the dealt hands, card codes per seat
    score: Mapped[str | None] = mapped_column(String(16), nullable=True)  # JSON [2] sets by team
    settings: Mapped[str] = mapped_column(Text, default="{}")  # JSON: deadlines, move cap
    seats: Mapped[list[FishSeat]] = relationship(back_populates="game",
                                                 order_by="FishSeat.seat",
                                                 cascade="all, delete-orphan")
    moves: Mapped[list[FishMove]] = relationship(back_populates="game",
                                                 order_by="FishMove.move",
                                                 cascade="all, delete-orphan")


class FishSeat(SeatColumns, Base):
    __tablename__ = "fish_seats"
    __table_args__ = (UniqueConstraint("game_id", "seat"),)
    game_id: Mapped[int] = mapped_column(ForeignKey("fish_games.id"), index=True)
    game: Mapped[FishGame] = relationship(back_populates="seats")


class FishMove(Base):
    __tablename__ = "fish_moves"
    __table_args__ = (UniqueConstraint("game_id", "move"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("fish_games.id"), index=True)
    move: Mapped[int] = mapped_column(Integer)  # 1, 2, ...
    seat: Mapped[int] = mapped_column(Integer)  # the asker or the caller
    kind: Mapped[str] = mapped_column(String(8))  # "ask" or "call"
    target: Mapped[int | None] = mapped_column(Integer, nullable=True)  # an ask's
    card: Mapped[str | None] = mapped_column(String(3), nullable=True)  # an ask's
    set_id: Mapped[int | None] = mapped_column(Integer, nullable=True)  # a call's
    holders: Mapped[str | None] = mapped_column(Text, nullable=True)  # a call's, JSON card->seat
    success: Mapped[bool] = mapped_column(Boolean)  # an ask's hit, a call's right
    played_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    think_ms: Mapped[int] = mapped_column(Integer)  # from the previous move to this one
    fallback: Mapped[str | None] = mapped_column(String(16), nullable=True)  # why it was forced
    belief: Mapped[str | None] = mapped_column(Text, nullable=True)  # JSON, a bot's FishThought
    game: Mapped[FishGame] = relationship(back_populates="moves")


class FishRecords:
    """The Fish records on an engine the Gongzhu Records opened (its SQLite pragmas apply).
    Synchronous; the server calls it from its one database thread."""

    def __init__(self, engine):
        self.engine = engine
        Base.metadata.create_all(engine, tables=[FishGame.__table__, FishSeat.__table__,
                                                 FishMove.__table__])

    def abandon_unfinished(self) -> int:
        """Mark every Fish game left waiting or playing (by a server that stopped) abandoned."""
        with Session(self.engine) as session, session.begin():
            result = session.execute(update(FishGame)
                                     .where(FishGame.status.in_(("waiting", "playing")))
                                     .values(status="abandoned", finished_at=now()))
            return cast(CursorResult, result).rowcount  # an UPDATE's result has one

    def new_game(self, table_id: str, num_players: int, calls: str, first_player: int,
                 seed: int | None, deal: list[list[str]], seats: list[tuple[str, str]],
                 settings: dict) -> int:
        with Session(self.engine) as session, session.begin():
            game = FishGame(table_id=table_id, status="waiting", num_players=num_players,
                            calls=calls, first_player=first_player,
                            seed=None if seed is None else str(seed), deal=json.dumps(deal),
                            settings=json.dumps(settings),
                            seats=[FishSeat(seat=i, kind=k, name=n)
                                   for i, (k, n) in enumerate(seats)])
            session.add(game)
            session.flush()
            return game.id

    def set_status(self, game_id: int, status: str) -> None:
        with Session(self.engine) as session, session.begin():
            session.execute(update(FishGame).where(FishGame.id == game_id).values(status=status))

    def name_seat(self, game_id: int, seat: int, name: str) -> None:
        with Session(self.engine) as session, session.begin():
            session.execute(update(FishSeat).where(FishSeat.game_id == game_id,
                                                   FishSeat.seat == seat).values(name=name))

    def add_move(self, row: dict) -> None:
        """One move (a row from `fish_move_row`)."""
        with self.engine.begin() as connection:
            connection.execute(insert(FishMove), [row])

    def finish(self, game_id: int, score: list[int]) -> None:
        with Session(self.engine) as session, session.begin():
            session.execute(update(FishGame).where(FishGame.id == game_id).values(
                status="finished", finished_at=now(), score=json.dumps(score)))

    def list_games(self, limit: int = 50, status: str | None = None,
                   offset: int = 0) -> list[dict]:
        """The newest Fish games first, `limit` of them after skipping `offset`, each as its
        summary: nothing of the deal (no deal, seed or moves), so a game in play can be
        listed."""
        with Session(self.engine) as session:
            query = select(FishGame).order_by(FishGame.id.desc()).offset(offset).limit(
                limit).options(selectinload(FishGame.seats))
            if status is not None:
                query = query.where(FishGame.status == status)
            return [_summary(g) for g in session.scalars(query)]

    def game(self, game_id: int) -> dict | None:
        """A Fish game with its seats and moves, or None."""
        with Session(self.engine) as session:
            game = session.get(FishGame, game_id)
            if game is None:
                return None
            return {**_summary(game), "seed": None if game.seed is None else int(game.seed),
                    "deal": json.loads(game.deal), "settings": json.loads(game.settings),
                    "moves": [_move_dict(m) for m in game.moves]}


def _summary(game: FishGame) -> dict:
    """A Fish game's fields that tell nothing of its cards."""
    return {**game_head(game), "num_players": game.num_players, "calls": game.calls,
            "first_player": game.first_player,
            "score": json.loads(game.score) if game.score else None,
            "seats": seat_list(game.seats)}


def fish_move_row(game_id: int, move: int, seat: int, kind: str, *, target: int | None = None,
                  card: str | None = None, set_id: int | None = None,
                  holders: dict[str, int] | None = None, success: bool, think_ms: int,
                  fallback: str | None, belief: dict | None) -> dict:
    """One row of fish_moves."""
    return {"game_id": game_id, "move": move, "seat": seat, "kind": kind, "target": target,
            "card": card, "set_id": set_id,
            "holders": json.dumps(holders) if holders is not None else None,
            "success": success, "played_at": now(), "think_ms": think_ms, "fallback": fallback,
            "belief": json.dumps(belief) if belief is not None else None}


def _move_dict(m: FishMove) -> dict:
    out = {"move": m.move, "seat": m.seat, "kind": m.kind, "success": m.success,
           "think_ms": m.think_ms, "fallback": m.fallback, "played_at": iso_time(m.played_at),
           "belief": json.loads(m.belief) if m.belief else None}
    if m.kind == "ask":
        out.update(target=m.target, card=m.card)
    else:
        assert m.holders is not None  # a call's holders are always stored
        out.update(set=m.set_id, holders=json.loads(m.holders))
    return out


def fish_params(game: dict) -> Params:
    return Params(num_players=game["num_players"], calls=game["calls"])


def _codes(cards) -> list[str]:
    return [card_code(c) for c in cards]


def replayed_state(game: dict, on_move=None) -> FishState:
    """The stored game (a dict from FishRecords.game) replayed on the rules engine; `on_move`
    (move dict, state after it) is called after each move. ValueError naming the move when the
    engine refuses a move or gives another outcome than the recorded one."""
    n = game["num_players"]
    hands = [[card_id(code, n) for code in hand] for hand in game["deal"]]
    state = FishState.new(fish_params(game), hands, first_player=game["first_player"])
    for move in game["moves"]:
        where = f"fish game {game['id']} move {move['move']}"
        try:
            if move["kind"] == "ask":
                event = state.ask(move["target"], card_id(move["card"], n), asker=move["seat"])
                outcome = event.success
            else:
                holders = [(card_id(c, n), s) for c, s in move["holders"].items()]
                outcome = state.call(move["seat"], move["set"], holders).correct
        except (IllegalMove, ValueError) as err:
            raise ValueError(f"{where}: the rules engine refuses it: {err}") from None
        if outcome != move["success"]:
            raise ValueError(f"{where}: recorded {'hit/right' if move['success'] else 'miss'}, "
                             f"the rules engine says otherwise")
        if on_move is not None:
            on_move(move, state)
    if game["score"] is not None and list(state.score) != list(game["score"]):
        raise ValueError(f"fish game {game['id']}: recorded score {game['score']}, the rules "
                         f"engine's {list(state.score)}")
    return state


def fish_replay(game: dict) -> dict:
    """Move-by-move frames of a stored Fish game, computed on the rules engine from its moves:
    every hand, the hand counts, the score and the seat to move after each move."""
    n = game["num_players"]
    hands = [[card_id(code, n) for code in hand] for hand in game["deal"]]

    def frame(state: FishState) -> dict:
        return {"hands": [_codes(state.hand(s)) for s in range(n)],
                "hand_counts": list(state.hand_counts), "score": list(state.score),
                "turn": None if state.is_terminal else state.current_player}

    first = FishState.new(fish_params(game), hands, first_player=game["first_player"])
    frames = [{"move": 0, **frame(first)}]
    state = replayed_state(game, lambda move, s: frames.append({**move, **frame(s)}))
    return {"id": game["id"], "status": game["status"], "num_players": n,
            "calls": game["calls"], "first_player": game["first_player"], "seats": game["seats"],
            "frames": frames, "score": list(state.score) if state.is_terminal else None,
            "recorded_score": game["score"]}


def fish_export(game: dict) -> str:
    """The game in the recorded transcript format (docs/rules.md section 18; players P0, P1,
    ... in seat order), replayed on the rules engine first."""
    state = replayed_state(game)
    return write_transcript(Transcript.from_state(state))
