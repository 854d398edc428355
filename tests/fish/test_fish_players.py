"""Fish players (fish/players/: logic.py, the roster and the FishPlayer protocol), their views
(FishState.view) and the match runner (fish/match.py).

Invariants: random and logic players only make legal moves and every game ends; a call the
logic player makes because its team's allocation is certain is always correct; the logic player
takes a certain hit when one exists, calls a set as soon as it is certain, and among equally
likely asks prefers a set it has already shown (logic_open does not); views show legal
asks only to the player to move; swapping teams over a deal is symmetric for identical players;
the Wilson interval matches known values; bad player names and counts are refused; the roster
is a table of players that implement the FishPlayer protocol.
"""

import dataclasses

import numpy as np
import pytest
from fish_games import deal_with

from scrofazero.fish.match import play_game, run_match, wilson
from scrofazero.fish.players.logic import LogicPlayer, LogicSettings, RandomPlayer, RandomSettings
from scrofazero.fish.players.protocol import FishPlayer
from scrofazero.fish.players.roster import FISH_PLAYERS, make_fish_player
from scrofazero.fish.players.scorer import Scorer
from scrofazero.games.fish.cards import card_id
from scrofazero.games.fish.events import Call
from scrofazero.games.fish.rules import AskMove, FishState, Params


class Recording:
    """Wraps a player and keeps the calls it made through call_now (certain calls)."""

    def __init__(self, inner):
        self.inner, self.certain_calls = inner, []

    def reset(self, *args, **kwargs):
        self.inner.reset(*args, **kwargs)

    def observe(self, event):
        self.inner.observe(event)
        if isinstance(event, Call) and event.caller == self.inner.seat and self.pending:
            self.certain_calls.append(event)
        self.pending = False

    def call_now(self, view):
        move = self.inner.call_now(view)
        self.pending = move is not None
        return move

    def act(self, view):
        self.pending = False
        return self.inner.act(view)


@pytest.mark.parametrize("num_players", [6, 8])
@pytest.mark.parametrize("calls", ["any_time", "own_turn"])
def test_random_games_are_legal_and_end(num_players, calls):
    params = Params(num_players=num_players, calls=calls)
    for seed in range(10):
        players = [RandomPlayer(seed=seed * 10 + s) for s in range(num_players)]
        result = play_game(params, players, seed=seed, first_player=seed % num_players)
        assert sum(result["score"]) == (9 if num_players == 6 else 8)
        assert not result["capped"]


def test_logic_certain_calls_are_correct_and_logic_beats_random():
    params = Params(num_players=6)
    certain = 0
    for seed in range(3):
        players = [Recording(LogicPlayer()) if s % 2 == 0 else RandomPlayer(seed=s)
                   for s in range(6)]
        result = play_game(params, players, seed=seed)
        calls = [c for p in players if isinstance(p, Recording) for c in p.certain_calls]
        assert all(c.correct for c in calls)
        certain += len(calls)
        assert result["score"][0] > result["score"][1]
    assert certain > 0


def _play(state, players, ask):
    event = state.ask(*ask)
    for p in players:
        p.observe(event)
    return event


def test_logic_takes_a_certain_hit():
    # seat 1 takes D2 from seat 0 in public, then misses and hands seat 0 the turn
    state = FishState.new(Params(num_players=6), deal_with(
        {"D2": 0, "D3": 0, "D4": 1, "D5": 3}), first_player=1)
    players = [LogicPlayer() for _ in range(6)]
    for seat, p in enumerate(players):
        p.reset(6, seat, state.hand(seat))
    assert _play(state, players, (0, card_id("D2"))).success
    assert not _play(state, players, (0, card_id("D5"))).success
    assert state.current_player == 0
    move = players[0].act(state.view(0))
    assert isinstance(move, AskMove)
    assert players[0].tracker.probabilities()[move.target, move.card] == pytest.approx(1.0)


def test_logic_calls_as_soon_as_the_set_is_certain():
    # team 0 (seats 0, 2, 4) ends up with the whole low-diamond set; seat 0 can place D4
    # only through the rule that an asker holds another card of the set
    state = FishState.new(Params(num_players=6), deal_with(
        {"D2": 0, "D3": 0, "D4": 2, "D5": 1, "D6": 1, "D7": 1}), first_player=2)
    players = [LogicPlayer() for _ in range(6)]
    for seat, p in enumerate(players):
        p.reset(6, seat, state.hand(seat))
    assert players[0].call_now(state.view(0)) is None
    for code in ("D7", "D5"):
        assert _play(state, players, (1, card_id(code))).success
        assert players[0].call_now(state.view(0)) is None  # D6 may still be anywhere
    assert _play(state, players, (1, card_id("D6"))).success
    move = players[0].call_now(state.view(0))
    assert move is not None and move.set_id == 0
    assert dict(move.assignment) == {card_id("D2"): 0, card_id("D3"): 0, card_id("D4"): 2,
                                     card_id("D5"): 2, card_id("D6"): 2, card_id("D7"): 2}
    assert state.call(0, move.set_id, move.assignment).correct


def test_views_and_symmetry():
    state = FishState.deal(Params(num_players=6), 3)
    mover = state.current_player
    assert state.view(mover).legal_asks == tuple(state.legal_asks())
    assert state.view((mover + 1) % 6).legal_asks == ()
    a = run_match(["random", "random"], 6, 4, seed=2)
    assert a["games"] == 8 and a["wins"] + a["draws"] + a["losses"] == 8
    assert a["mean_sets"][0] + a["mean_sets"][1] == pytest.approx(9)


def test_wilson_and_errors():
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-3) and high == pytest.approx(0.5962, abs=1e-3)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    with pytest.raises(ValueError, match="unknown Fish player"):
        make_fish_player("greed")
    with pytest.raises(ValueError, match="exactly two"):
        run_match(["logic"], 6, 1)


def test_hiding_prefers_a_set_already_shown():
    # seat 0 took D3 in public, so asking for low diamonds tells the table nothing new; its
    # three hidden high hearts make that set its team's strongest, which logic_open prefers
    own = ["D2", "H9", "HT", "HJ", "C2", "C9", "S2", "S9", "D8"]
    state = FishState.new(Params(num_players=6), deal_with({**{c: 0 for c in own}, "D3": 1}))
    moves = {}
    for name in ("logic", "logic_open"):
        game = state.clone()
        player = make_fish_player(name)
        player.reset(6, 0, game.hand(0))
        player.observe(game.ask(1, card_id("D3")))
        moves[name] = player.act(game.view(0))
    assert moves["logic"] == AskMove(3, card_id("D4"))
    assert moves["logic_open"] == AskMove(3, card_id("HQ"))


def seeded_player(name: str) -> FishPlayer:
    """The roster's player `name`, seeded (the learned one with an untrained scorer)."""
    return make_fish_player(name, seed=1, **({"model": Scorer()} if name == "learned" else {}))


def test_the_roster_is_a_table_of_players_that_follow_the_protocol():
    """Every FISH_PLAYERS entry builds, from its settings dataclass, a FishPlayer; a settings
    field given by keyword reaches the player; a name or argument it does not have is refused
    naming it."""
    assert set(FISH_PLAYERS) == {"random", "logic", "logic_open", "search", "learned"}
    for name, spec in FISH_PLAYERS.items():
        assert spec.name == name and spec.about and dataclasses.is_dataclass(spec.settings)
        player = seeded_player(name)
        assert isinstance(player, FishPlayer), name
    assert make_fish_player("random", call_prob=0.25).call_prob == 0.25
    assert make_fish_player("logic", settings=LogicSettings(hide_margin=0.1)).hide_margin == 0.1
    assert make_fish_player("logic").hide and not make_fish_player("logic_open").hide
    with pytest.raises(ValueError, match="stats is not an argument of Fish player 'logic'"):
        make_fish_player("logic", stats={})
    with pytest.raises(TypeError, match="takes LogicSettings"):
        FISH_PLAYERS["logic"].make(settings=RandomSettings())


def test_a_players_belief_is_its_exact_belief_or_none():
    """`belief()`: None for the random player; for the others the exact belief of their seat,
    certain of their own hand and summing to 1 over the seats for every card in play."""
    game = FishState.deal(Params(num_players=6), 3, first_player=0)
    hand = game.view(0).hand
    for name in FISH_PLAYERS:
        player = seeded_player(name)
        player.reset(6, 0, hand)
        probs = player.belief()
        if name == "random":
            assert probs is None
            continue
        assert probs.shape[0] == 6, name
        assert np.allclose(probs[0, list(hand)], 1.0), name
        assert np.allclose(probs.sum(axis=0)[list(hand)], 1.0), name
        assert np.allclose(probs.sum(axis=0), 1.0), name
