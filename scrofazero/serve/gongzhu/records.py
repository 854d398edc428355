"""Every Gongzhu game kept in a database through SQLAlchemy: matches, games, their seats, their
moves with times, and the finished reviews of a seat's moves (the tables' base and the URL
handling are common/records.py's).

A SQLite file by default, any SQLAlchemy URL (PostgreSQL) by option. A table plays one match:
one row of `matches`, one game per hand. The server writes a game when its hand opens, each move
as it is played and the result when it ends, so a restart loses no finished game;
`Records.abandon_unfinished` marks games and matches a previous server left unfinished as
abandoned. A database made before matches is migrated when it is opened (games gain match_id and
hand, null for the games it holds).
`replay_frames` and `export_text` rebuild a game on the rules engine from its moves alone.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import cast

from sqlalchemy import (
    CursorResult,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import (
    Mapped,
    Session,
    mapped_column,
    relationship,
    selectinload,
)
from sqlalchemy.pool import QueuePool

from scrofazero.games.gongzhu.cards import (
    card_index,
    mask_to_cards,
)
from scrofazero.games.gongzhu.deals import parse_deal_line
from scrofazero.games.gongzhu.game_record import GameRecord, format_game, format_header, replay
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.serve.common.records import (
    LIVE,
    Base,
    GameColumns,
    RecordsError,
    SeatColumns,
    database_url,
    game_head,
    iso_time,
    now,
    seat_list,
    sqlite_pragmas,
)
from scrofazero.serve.gongzhu.protocol import card_codes, public_state


class Match(Base):
    __tablename__ = "matches"
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[str] = mapped_column(String(32), index=True)
    status: Mapped[str] = mapped_column(String(16), index=True)  # one of STATUSES
    hands: Mapped[int] = mapped_column(Integer)  # the most hands it plays
    target: Mapped[int | None] = mapped_column(Integer, nullable=True)  # a lead that ends it
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    totals: Mapped[str] = mapped_column(String(64), default="[0, 0]")  # JSON [2] team points
    games: Mapped[list[Game]] = relationship(back_populates="match", order_by="Game.hand")


class Game(GameColumns, Base):
    __tablename__ = "games"
    deal: Mapped[str] = mapped_column(Text)  # the 52-code deal line
    deal_number: Mapped[int | None] = mapped_column(Integer, nullable=True)  # standard deal no.
    leader: Mapped[int] = mapped_column(Integer)
    scores: Mapped[str | None] = mapped_column(String(64), nullable=True)  # JSON [4] pile scores
    settings: Mapped[str] = mapped_column(Text, default="{}")  # JSON: deadlines, thinking, ...
    # null for games recorded before matches (each one a match of its own)
    match_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id"), nullable=True,
                                                 index=True)
    hand: Mapped[int | None] = mapped_column(Integer, nullable=True)  # 1.. within its match
    match: Mapped[Match | None] = relationship(back_populates="games")
    seats: Mapped[list[Seat]] = relationship(back_populates="game", order_by="Seat.seat",
                                               cascade="all, delete-orphan")
    moves: Mapped[list[Move]] = relationship(back_populates="game", order_by="Move.ply",
                                               cascade="all, delete-orphan")


class Seat(SeatColumns, Base):
    __tablename__ = "seats"
    __table_args__ = (UniqueConstraint("game_id", "seat"),)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    game: Mapped[Game] = relationship(back_populates="seats")


class Move(Base):
    __tablename__ = "moves"
    __table_args__ = (UniqueConstraint("game_id", "ply"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    ply: Mapped[int] = mapped_column(Integer)  # 1..52
    seat: Mapped[int] = mapped_column(Integer)
    card: Mapped[str] = mapped_column(String(3))
    played_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)
    think_ms: Mapped[int] = mapped_column(Integer)  # from "your turn" to the move
    fallback: Mapped[str | None] = mapped_column(String(16), nullable=True)  # why it was forced
    thinking: Mapped[str | None] = mapped_column(Text, nullable=True)  # JSON, ScrofaZero's moves
    game: Mapped[Game] = relationship(back_populates="moves")


class StoredReview(Base):
    """A finished review of one seat's moves (serve/gongzhu/reviews.py): a finished or abandoned
    game's moves never change, so neither does their review by the same reviewer; `decided_by`
    is the digest of what else decides it (the review's settings, the network's file)."""

    __tablename__ = "reviews"
    __table_args__ = (UniqueConstraint("game_id", "seat", "decided_by"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id"), index=True)
    seat: Mapped[int] = mapped_column(Integer)
    decided_by: Mapped[str] = mapped_column(String(64))
    review: Mapped[str] = mapped_column(Text)  # JSON: eval/review.py review_hand's
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now)


class Records:
    """The game records. Synchronous; the server calls it from one worker thread."""

    def __init__(self, db: str):
        self.url = database_url(db)
        try:
            # a SQLite database is a file here (common/database.py refuses one in memory): the
            # file's pool, even for a URL whose ignored `mode=memory` would pick another
            self.engine = create_engine(self.url, **(
                {"poolclass": QueuePool} if self.url.startswith("sqlite") else {}))
            if self.engine.dialect.name == "sqlite":
                event.listen(self.engine, "connect", sqlite_pragmas)
            Base.metadata.create_all(self.engine)
            _migrate(self.engine)
        except SQLAlchemyError as err:
            raise RecordsError(f"cannot open the records database {self.url}: {err}") from None

    def abandon_unfinished(self) -> int:
        """Mark every game and match left unfinished (by a server that stopped) as abandoned;
        returns the number of games."""
        with Session(self.engine) as session, session.begin():
            session.execute(update(Match).where(Match.status.in_(LIVE))
                            .values(status="abandoned", finished_at=now()))
            result = session.execute(update(Game).where(Game.status.in_(LIVE))
                                     .values(status="abandoned", finished_at=now()))
            return cast(CursorResult, result).rowcount  # an UPDATE's result has one

    def new_match(self, table_id: str, hands: int, target: int | None) -> int:
        with Session(self.engine) as session, session.begin():
            match = Match(table_id=table_id, status="waiting", hands=hands, target=target,
                          totals=json.dumps([0, 0]))
            session.add(match)
            session.flush()
            return match.id

    def set_match(self, match_id: int, status: str, totals: list[int]) -> None:
        """The match's status and running totals; a finished, abandoned or expired one is
        stamped with its end time."""
        values: dict[str, object] = {"status": status, "totals": json.dumps(totals)}
        if status not in LIVE:
            values["finished_at"] = now()
        with Session(self.engine) as session, session.begin():
            session.execute(update(Match).where(Match.id == match_id).values(**values))

    def new_game(self, table_id: str, deal_line: str, deal_number: int | None, leader: int,
                 seats: list[tuple[str, str]], settings: dict, match_id: int | None = None,
                 hand: int | None = None) -> int:
        with Session(self.engine) as session, session.begin():
            game = Game(table_id=table_id, status="waiting", deal=deal_line,
                        deal_number=deal_number, leader=leader, settings=json.dumps(settings),
                        match_id=match_id, hand=hand,
                        seats=[Seat(seat=i, kind=k, name=n) for i, (k, n) in enumerate(seats)])
            session.add(game)
            session.flush()
            return game.id

    def set_status(self, game_id: int, status: str) -> None:
        values: dict[str, object] = {"status": status}
        if status not in LIVE:
            values["finished_at"] = now()
        with Session(self.engine) as session, session.begin():
            session.execute(update(Game).where(Game.id == game_id).values(**values))

    def name_seat(self, game_id: int, seat: int, name: str) -> None:
        with Session(self.engine) as session, session.begin():
            session.execute(update(Seat).where(Seat.game_id == game_id, Seat.seat == seat)
                            .values(name=name))

    def add_moves(self, rows: list[dict]) -> None:
        """Moves (rows from `move_row`) in one transaction: the server commits every move that
        arrived while the previous commit ran together (a group commit)."""
        # A Core insert: the ORM's unit of work cost more than the rest of a move under load
        # (benchmarks/serve.py, profiled)
        with self.engine.begin() as connection:
            connection.execute(insert(Move), rows)

    def finish(self, game_id: int, scores: list[int]) -> None:
        with Session(self.engine) as session, session.begin():
            session.execute(update(Game).where(Game.id == game_id).values(
                status="finished", finished_at=now(), scores=json.dumps(scores)))

    def list_games(self, limit: int = 50, status: str | None = None,
                   offset: int = 0) -> list[dict]:
        """The newest games first, `limit` of them after skipping `offset`."""
        with Session(self.engine) as session:
            query = select(Game).order_by(Game.id.desc()).offset(offset).limit(limit).options(
                selectinload(Game.match), selectinload(Game.seats))
            if status is not None:
                query = query.where(Game.status == status)
            return [_summary(g) for g in session.scalars(query)]

    def game(self, game_id: int) -> dict | None:
        """A game with its seats and moves, or None."""
        with Session(self.engine) as session:
            game = session.get(Game, game_id)
            if game is None:
                return None
            out = _summary(game)
            out["deal"] = game.deal
            out["settings"] = json.loads(game.settings)
            out["moves"] = [{"ply": m.ply, "seat": m.seat, "card": m.card,
                             "think_ms": m.think_ms, "fallback": m.fallback,
                             "played_at": iso_time(m.played_at),
                             "thinking": json.loads(m.thinking) if m.thinking else None}
                            for m in game.moves]
            return out

    def list_matches(self, limit: int = 50, status: str | None = None,
                     offset: int = 0) -> list[dict]:
        """The newest matches first, `limit` of them after skipping `offset`: each with the
        ids of its games in hand order (`game_ids`) instead of their summaries."""
        with Session(self.engine) as session:
            query = select(Match).order_by(Match.id.desc()).offset(offset).limit(limit).options(
                selectinload(Match.games))
            if status is not None:
                query = query.where(Match.status == status)
            return [{**_match_head(m), "game_ids": [g.id for g in m.games]}
                    for m in session.scalars(query)]

    def match(self, match_id: int) -> dict | None:
        """A match with the summaries of its games in hand order, or None."""
        with Session(self.engine) as session:
            match = session.get(Match, match_id,
                                options=[selectinload(Match.games).selectinload(Game.seats)])
            if match is None:
                return None
            return {**_match_head(match), "games": [_summary(g) for g in match.games]}

    def game_status(self, game_id: int) -> str | None:
        """A game's status alone (None: no such game)."""
        with Session(self.engine) as session:
            return session.scalar(select(Game.status).where(Game.id == game_id))

    def stored_reviews(self, game_ids: list[int], seat: int, decided_by: str) -> dict[int, str]:
        """The stored reviews (their JSON) of `seat` in the games `game_ids`, by game id."""
        with Session(self.engine) as session:
            rows = session.execute(select(StoredReview.game_id, StoredReview.review).where(
                StoredReview.game_id.in_(game_ids), StoredReview.seat == seat,
                StoredReview.decided_by == decided_by))
            return {game_id: review for game_id, review in rows}

    def save_review(self, game_id: int, seat: int, decided_by: str, review: str) -> None:
        """Keep a finished review (its JSON); one already kept stays as it is."""
        try:
            with Session(self.engine) as session, session.begin():
                session.add(StoredReview(game_id=game_id, seat=seat, decided_by=decided_by,
                                         review=review))
        except IntegrityError:
            pass  # the same review, kept already

    def seat_moves(self, game_ids: list[int], seat: int) -> dict[int, int]:
        """How many moves `seat` made in each of the games `game_ids` (0s left out)."""
        with Session(self.engine) as session:
            rows = session.execute(select(Move.game_id, func.count()).where(
                Move.game_id.in_(game_ids), Move.seat == seat).group_by(Move.game_id))
            return {game_id: count for game_id, count in rows}

    def match_status(self, match_id: int) -> str | None:
        with Session(self.engine) as session:
            return session.scalar(select(Match.status).where(Match.id == match_id))

    def close(self) -> None:
        self.engine.dispose()


def game_settled(records: Records, game: dict) -> bool:
    """Whether a stored game's record (`Records.game`) can no longer change: it and its match
    are over (a game's deal number is told only once its whole match is)."""
    if game["status"] in LIVE:
        return False
    return game["match_id"] is None or records.match_status(game["match_id"]) not in LIVE


def _migrate(engine) -> None:
    """Bring a database made before matches up to the models: games gain match_id and hand
    (null for the games already there). Idempotent."""
    have = {c["name"] for c in inspect(engine).get_columns("games")}
    added = [c for c in ("match_id", "hand") if c not in have]
    if not added:
        return
    with engine.begin() as connection:
        if "match_id" in added:
            connection.execute(text("ALTER TABLE games ADD COLUMN match_id INTEGER "
                                    "REFERENCES matches (id)"))
            connection.execute(text("CREATE INDEX ix_games_match_id ON games (match_id)"))
        if "hand" in added:
            connection.execute(text("ALTER TABLE games ADD COLUMN hand INTEGER"))


def move_row(game_id: int, ply: int, seat: int, card: str, think_ms: int, fallback: str | None,
             thinking: dict | None) -> dict:
    """One row of the moves table."""
    return {"game_id": game_id, "ply": ply, "seat": seat, "card": card, "think_ms": think_ms,
            "fallback": fallback, "played_at": now(),
            "thinking": json.dumps(thinking) if thinking is not None else None}


def _deal_told(game: Game) -> bool:
    """Whether a game's standard deal number may be shown: a number names every hand of its
    deal, and hand k of a match plays deal N + k - 1, so only once its whole match is over (a
    game recorded before matches: once it is over)."""
    live = game.match.status if game.match is not None else game.status
    return game.status not in LIVE and live not in LIVE


def _match_head(match: Match) -> dict:
    """A match's own fields, as its answer and the listing of matches begin."""
    return {"id": match.id, "table": match.table_id, "status": match.status,
            "hands": match.hands, "target": match.target,
            "created_at": iso_time(match.created_at), "finished_at": iso_time(match.finished_at),
            "totals": json.loads(match.totals)}


def _summary(game: Game) -> dict:
    return {**game_head(game), "deal_number": game.deal_number if _deal_told(game) else None,
            "leader": game.leader, "scores": json.loads(game.scores) if game.scores else None,
            "match_id": game.match_id, "hand": game.hand, "seats": seat_list(game.seats)}


def to_game_record(game: dict) -> GameRecord:
    """The rules-level record of a stored game (dict from `Records.game`)."""
    deal = parse_deal_line(game["deal"], where=f"game {game['id']}")
    return GameRecord(tuple(int(c) for c in deal), game["leader"],
                      tuple(card_index(m["card"]) for m in game["moves"]),
                      tuple(game["scores"]) if game["scores"] else None, f"game {game['id']}")


def export_text(game: dict) -> str:
    """The game as a text block (games/gongzhu/game_record.py) after its header comment (its id,
    status, time and seats as JSON), replayed to check it."""
    record = to_game_record(game)
    replay(record)
    header = format_header({k: game[k] for k in ("id", "status", "created_at", "seats")})
    return header + format_game(record.deal, record.leader, record.moves, record.score)


def replay_frames(game: dict) -> dict:
    """Move-by-move frames of a stored game, computed on the rules engine from its moves."""
    record = to_game_record(game)
    state = GongzhuState(list(record.deal), leader=record.leader)
    frames = [{"ply": 0, "hands": [card_codes(mask_to_cards(h)) for h in state.hands],
               **public_state(state).model_dump()}]
    for move, card in zip(game["moves"], record.moves):
        state.apply(card)
        frame = {"ply": move["ply"], "seat": move["seat"], "card": move["card"],
                 "fallback": move["fallback"], "thinking": move["thinking"],
                 "hands": [card_codes(mask_to_cards(h)) for h in state.hands],
                 **public_state(state).model_dump()}
        if len(state.history) % 4 == 0:
            # the trick just closed: show its four cards on the frame that completes it
            frame["trick"] = [[s, card_codes([c])[0]] for s, c in state.history[-4:]]
            frame["winner"] = state.leader
        frames.append(frame)
    final = state.pile_scores() if state.is_terminal() else None
    return {"id": game["id"], "status": game["status"], "seats": game["seats"],
            "leader": record.leader, "frames": frames, "scores": final,
            "recorded_scores": game["scores"], "match_id": game["match_id"],
            "hand": game["hand"]}


