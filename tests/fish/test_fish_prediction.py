"""Hand-prediction metric (scrofazero.games.fish.prediction).

Invariants: a prediction is never the observer's own seat, never made for a card the observer
knows for certain, and ties go to the lowest seat; the true holders replayed from the events
match the engine's; at the deal every observer predicts each card it does not hold (42 in an
8-player game) and counts add up over files; the logic tracker beats plain counting on engine
games; the shipped recordings all load, replay without a tracker rejecting any event, and
score between 0 and 1.
"""

import numpy as np
import pytest
from fish_games import random_game

from scrofazero.fish.prediction.metric import (
    evaluate_game,
    evaluate_predictions,
    game_from_events,
    load_recordings,
    predict_holders,
)
from scrofazero.games.fish.rules import FishState, Params


def test_predict_holders_rules():
    probs = np.zeros((4, 3))
    probs[:, 0] = [0.4, 0.3, 0.3, 0.0]  # the observer's own seat is never the answer
    probs[:, 1] = [0.0, 0.5, 0.0, 0.5]  # tie: lowest seat
    probs[:, 2] = [0.0, 0.0, 1.0, 0.0]  # certain: not a prediction
    assert predict_holders(probs, observer=0, cards=range(3)) == {0: 1, 1: 1}


def test_true_holders_follow_the_engine():
    state = random_game(4, 8, p_hit=0.5)
    game = game_from_events("g", 8, state.initial_hands, state.events)
    assert len(game.holders) == len(state.events) + 1
    assert game.holders[-1] == state.holders
    assert game.holders[0] == FishState.new(Params(8), state.initial_hands).holders


def test_counts_at_the_deal_and_over_files():
    state = FishState.deal(Params(num_players=8), 1)
    state.ask(*state.legal_asks()[0])
    game = game_from_events("one", 8, state.initial_hands, state.events)
    # one event: only the position after the deal is scored
    assert evaluate_game(game)["predictions"] == 8 * 42
    games = [game_from_events(f"g{s}", 6, g.initial_hands, g.events)
             for s, g in enumerate(random_game(s, 6) for s in range(2))]
    out = evaluate_predictions(games, observers=(0, 3))
    assert set(out["per_file"]) == {"g0", "g1"}
    assert out["predictions"] == sum(r["predictions"] for r in out["per_file"].values())
    assert out["correct"] == sum(r["correct"] for r in out["per_file"].values())
    assert out["accuracy"] == pytest.approx(out["correct"] / out["predictions"])


def test_logic_beats_counting_on_engine_games():
    games = [game_from_events(f"g{s}", 8, g.initial_hands, g.events)
             for s, g in enumerate(random_game(10 + s, 8, p_hit=0.3) for s in range(3))]
    logic = evaluate_predictions(games, observers=(0, 5))
    counting = evaluate_predictions(games, observers=(0, 5), baseline=True)
    assert logic["accuracy"] > counting["accuracy"] + 0.03


def test_recordings_load_and_score():
    games, _ = load_recordings()
    assert len(games) == 6 and {g.num_players for g in games} == {6, 8}
    game = min(games, key=lambda g: len(g.events))
    out = evaluate_predictions([game], soft=1.0, observers=(1,))
    result = out["per_file"][game.name]
    assert result["rejected"] == 0 and 0 < result["accuracy"] < 1
    assert result["predictions"] > 100
