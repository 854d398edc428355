"""A played Gongzhu game as text: the standard deal line, the first leader and the move list.

One game is a block of `key value` lines (a file may hold several blocks, '#' comments and blank
lines between them):

    deal H4 DJ C3 ... (52 codes; seat i is dealt codes 13i .. 13i+12, as in the deal files)
    leader 0
    moves SQ S2 S5 ... (the cards in the order they were played, up to 52)
    score -100 0 50 0 (optional: each seat's pile score, checked against the replay)

A block may follow a header comment, `# game ` and one JSON object on one line saying what the
block is (the table server's export: the game's id, status, time and seats, names with spaces
too); `format_header` writes it and the block read after it keeps it as `info`.

`replay` plays the moves on the rules engine, so a record that breaks a rule or whose stated
score differs from the replay's is refused with the file, line and ply that fail.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from scrofazero.games.gongzhu.cards import NUM_CARDS, card_code, card_index
from scrofazero.games.gongzhu.deals import DealError, format_deal, parse_deal_line
from scrofazero.games.gongzhu.rules import GongzhuState

KEYS = ("deal", "leader", "moves", "score")
HEADER = "# game "  # a header comment: this, then one JSON object


class GameRecordError(ValueError):
    """A game record that cannot be read or replayed; the message says where."""


@dataclass(frozen=True)
class GameRecord:
    deal: tuple[int, ...]  # [52] card indices as dealt
    leader: int  # first leader
    moves: tuple[int, ...]  # cards in play order
    score: tuple[int, ...] | None = None  # [4] pile scores as recorded, if given
    where: str = "game record"  # file:line of the block, for messages
    info: dict | None = None  # the JSON object of the header comment before the block, if any


def format_game(deal: Sequence[int], leader: int, moves: Sequence[int],
                score: Sequence[int] | None = None) -> str:
    """The text block of one game (ends with a newline)."""
    lines = [f"deal {format_deal(deal)}", f"leader {int(leader)}",
             "moves " + " ".join(card_code(int(c)) for c in moves)]
    if score is not None:
        lines.append("score " + " ".join(str(int(s)) for s in score))
    return "\n".join(lines) + "\n"


def format_header(info: dict) -> str:
    """The header comment line of a block (ends with a newline): `info` as JSON, every
    character outside ASCII escaped, so that no name can break the line."""
    return HEADER + json.dumps(info) + "\n"


def _header(line: str, where: str) -> dict | None:
    """A comment line's header object (None: not a header, as "# game 12 (finished), ..."
    of exports before headers were JSON)."""
    if not line.startswith(HEADER + "{"):
        return None
    try:
        info = json.loads(line[len(HEADER):])
    except ValueError as err:
        raise GameRecordError(f"{where}: the '# game' header is not JSON: {err}") from None
    if not isinstance(info, dict):
        raise GameRecordError(f"{where}: the '# game' header must be one JSON object")
    return info


def _parse_block(fields: dict[str, tuple[int, str]], source: str, start: int,
                 info: dict | None = None) -> GameRecord:
    where = f"{source}:{start}"
    for key in ("deal", "leader", "moves"):
        if key not in fields:
            raise GameRecordError(f"{where}: the game has no '{key}' line")
    line, text = fields["deal"]
    try:
        deal = parse_deal_line(text, where=f"{source}:{line}")
    except DealError as err:
        raise GameRecordError(str(err)) from None
    line, text = fields["leader"]
    if text not in ("0", "1", "2", "3"):
        raise GameRecordError(f"{source}:{line}: leader must be a seat 0..3, got {text!r}")
    line, text = fields["moves"]
    moves = []
    for k, code in enumerate(text.split()):
        try:
            moves.append(card_index(code))
        except ValueError as err:
            raise GameRecordError(f"{source}:{line}: move {k + 1}: {err}") from None
    if len(moves) > NUM_CARDS:
        raise GameRecordError(f"{source}:{line}: {len(moves)} moves, at most 52")
    score = None
    if "score" in fields:
        line, text = fields["score"]
        try:
            score = tuple(int(s) for s in text.split())
        except ValueError:
            score = ()
        if len(score) != 4:
            raise GameRecordError(f"{source}:{line}: score needs 4 integers, got {text!r}")
    return GameRecord(tuple(int(c) for c in deal), int(fields["leader"][1]), tuple(moves),
                      score, where, info)


def parse_games(text: str, source: str = "game record") -> list[GameRecord]:
    """Every game block of a text, each with the header comment just before it (if any);
    errors name `source` and the 1-based line."""
    fields: dict[str, tuple[int, str]]  # key -> (line number, value)
    games, fields, start = [], {}, 0
    header = info = None
    for lineno, raw in enumerate(text.splitlines() + [""], start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            if fields:
                games.append(_parse_block(fields, source, start, info))
                fields = {}
            found = _header(line, f"{source}:{lineno}")
            header = header if found is None else found
            continue
        key, _, value = line.partition(" ")
        if key not in KEYS:
            raise GameRecordError(f"{source}:{lineno}: unknown key {key!r}; "
                                  f"a game has lines {', '.join(KEYS)}")
        if key in fields:
            raise GameRecordError(f"{source}:{lineno}: a second '{key}' line in one game "
                                  "(separate games by a blank line)")
        if not fields:
            start, info, header = lineno, header, None
        fields[key] = (lineno, value.strip())
    if not games:
        raise GameRecordError(f"{source}: no game found")
    return games


def load_games(path: str | os.PathLike) -> list[GameRecord]:
    """Read a file of game blocks."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # -sig: a byte order mark is skipped
    except (OSError, UnicodeDecodeError) as err:
        raise GameRecordError(f"{path}: cannot read game records: {err}") from None
    return parse_games(text, str(path))


def replay(record: GameRecord) -> GongzhuState:
    """The state after the record's moves. Raises GameRecordError naming the ply of an illegal
    move, or the scores if the record states a final score the replay does not give."""
    state = GongzhuState(list(record.deal), leader=record.leader)
    for ply, card in enumerate(record.moves, start=1):
        try:
            state.apply(card)
        except ValueError as err:
            raise GameRecordError(
                f"{record.where}: move {ply} ({card_code(card)}): {err}") from None
    if record.score is not None:
        if not state.is_terminal():
            raise GameRecordError(f"{record.where}: a score is stated but only "
                                  f"{len(record.moves)} of 52 cards were played")
        if tuple(state.pile_scores()) != record.score:
            raise GameRecordError(f"{record.where}: stated score {list(record.score)} differs "
                                  f"from the replay's {state.pile_scores()}")
    return state
