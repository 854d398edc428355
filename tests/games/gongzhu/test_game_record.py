"""Game records as text (games/gongzhu/game_record.py).

Invariants: a played game formats to text that parses back to the same deal, leader, moves and
score and replays to the same state; several blocks in one file are read in order; a record
that breaks a rule, states a wrong score, or is malformed is refused with its file and line (and
the ply of the bad move).
"""

import numpy as np
import pytest

from scrofazero.games.gongzhu.deals import random_deal
from scrofazero.games.gongzhu.game_record import (
    GameRecordError,
    format_game,
    load_games,
    parse_games,
    replay,
)
from scrofazero.games.gongzhu.rules import GongzhuState


def random_game(seed: int, plies: int = 52):
    rng = np.random.default_rng(seed)
    deal = random_deal(rng)
    leader = int(rng.integers(4))
    state = GongzhuState(deal, leader=leader)
    moves = []
    for _ in range(plies):
        card = int(rng.choice(state.legal_actions()))
        state.apply(card)
        moves.append(card)
    return deal, leader, moves, state


@pytest.mark.parametrize("seed", range(5))
def test_round_trip_and_replay(seed):
    deal, leader, moves, state = random_game(seed)
    text = format_game(deal, leader, moves, state.pile_scores())
    (record,) = parse_games(text, "g.txt")
    assert list(record.deal) == deal.tolist() and record.leader == leader
    assert list(record.moves) == moves and list(record.score) == state.pile_scores()
    back = replay(record)
    assert back.history == state.history and back.pile_scores() == state.pile_scores()


def test_several_blocks_and_a_partial_game(tmp_path):
    full = random_game(1)
    part = random_game(2, plies=17)
    path = tmp_path / "games.txt"
    path.write_text("# two games\n" + format_game(*full[:3], full[3].pile_scores()) + "\n"
                    + format_game(*part[:3]))
    first, second = load_games(path)
    assert replay(first).is_terminal() and len(replay(second).history) == 17
    assert second.score is None and second.where == f"{path}:7"


def test_errors_name_the_file_line_and_ply(tmp_path):
    deal, leader, moves, state = random_game(3)
    good = format_game(deal, leader, moves, state.pile_scores()).splitlines()
    bad_score = "\n".join(good[:3] + ["score 1 2 3 4"])
    with pytest.raises(GameRecordError, match=r"f:1: stated score \[1, 2, 3, 4\] differs"):
        replay(parse_games(bad_score, "f")[0])
    swapped = moves.copy()
    swapped[1], swapped[2] = swapped[2], swapped[1]  # seat 1 plays seat 2's card
    text = format_game(deal, leader, swapped)
    with pytest.raises(GameRecordError, match="f:1: move 2 "):
        replay(parse_games(text, "f")[0])
    cases = [("\n".join(good[:1] + good[2:]), "f:1: the game has no 'leader' line"),
             ("\n".join([good[0], "leader 5"] + good[2:]), "f:2: leader must be a seat"),
             ("\n".join(good[:2] + ["moves S2 XX"]), "f:3: move 2: unknown card code"),
             ("\n".join(good + ["deal " + good[0][5:]]), "f:5: a second 'deal' line"),
             ("\n".join(good[:3] + ["scores 0"]), "f:4: unknown key 'scores'"),
             ("\n".join(good[:3] + ["score 0 0"]), "f:4: score needs 4 integers"),
             ("deal S2 S3\nleader 0\nmoves", "f:1: expected 52 card codes"),
             ("# nothing\n", "f: no game found")]
    for text, message in cases:
        with pytest.raises(GameRecordError, match=message):
            parse_games(text, "f")
    with pytest.raises(GameRecordError, match="cannot read"):
        load_games(tmp_path / "missing.txt")
