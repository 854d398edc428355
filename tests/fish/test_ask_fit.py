"""Fitting the behaviour-aware belief (scrofazero/fish/prediction/ask_fit.py).

Invariants: the ask statistics count, from the true hands, exactly the asks that break or keep
each rule (checked on engine games against a direct replay, including asks for held cards);
leave-one-file-out picks, for each file, the grid model with the least log-loss on the other
files (never on the file itself) and scores each file in full with its fold's model.
"""

import numpy as np

from scrofazero.fish.belief.evidence import AskModel
from scrofazero.fish.prediction.ask_fit import ask_statistics, fit_leave_one_out
from scrofazero.fish.prediction.metric import evaluate_game, game_from_events
from scrofazero.games.fish.cards import set_cards, set_of
from scrofazero.games.fish.events import Ask
from scrofazero.games.fish.rules import FishState, Params

LOOSE = {"ask_held_allowed": True, "ask_needs_other": False}


def engine_game(seed: int, num_players: int = 6, plies: int = 40):
    rng = np.random.default_rng(seed)
    state = FishState.deal(Params(num_players=num_players, calls="any_time", **LOOSE), rng)
    truth = []  # per ask: (asker had another card, asker held the card, target had another)
    for _ in range(plies):
        if state.is_terminal or state.must_call or not state.legal_asks():
            break
        asks = state.legal_asks()
        target, card = asks[rng.integers(len(asks))]
        asker = state.current_player
        others = [c for c in set_cards(set_of(card)) if c != card]
        truth.append((any(state.holder(c) == asker for c in others), state.holder(card) == asker,
                      any(state.holder(c) == target for c in others)))
        state.ask(target, card)
    game = game_from_events(f"g{seed}", num_players, state.initial_hands, state.events, **LOOSE)
    return game, truth


def test_ask_statistics_count_the_replayed_asks():
    games, truths = zip(*(engine_game(seed) for seed in range(4)))
    stats = ask_statistics(games)
    for game, truth in zip(games, truths):
        entry = stats["per_file"][game.name]
        assert entry["asks"] == len(truth) == sum(isinstance(e, Ask) for e in game.events)
        assert entry["asker_no_other_card"] == sum(not t[0] for t in truth)
        assert entry["asker_held_asked_card"] == sum(t[1] for t in truth)
        assert entry["target_held_another_card"] == sum(t[2] for t in truth)
        assert entry["hits"] == sum(e.success for e in game.events)
    assert stats["total"]["asks"] == sum(len(t) for t in truths)
    assert sum(t[1] for truth in truths for t in truth) > 0  # the held-card case is exercised


def test_leave_one_out_picks_by_the_other_files():
    games = [engine_game(seed, plies=12)[0] for seed in range(3)]
    models = [AskModel(), AskModel(0.9, 0.9, 0.8), AskModel(0.6, 0.55, 0.3)]
    result = fit_leave_one_out(games, models, stride=3, observers=(1,))
    losses = {m: {g.name: evaluate_game(g, observers=[1], model=m, stride=3) for g in games}
              for m in models}
    for game in games:
        def held_out(m, held=game.name):
            rs = [r for name, r in losses[m].items() if name != held]
            return sum(r["loss_sum"] for r in rs) / sum(r["predictions"] for r in rs)
        assert result["folds"][game.name] == vars(min(models, key=held_out))
        full = evaluate_game(game, model=AskModel(**result["folds"][game.name]))
        assert result["per_file"][game.name]["loss_sum"] == full["loss_sum"]
    assert len(result["grid"]) == len(models)
