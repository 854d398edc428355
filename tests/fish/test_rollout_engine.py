"""The search player's rollout engine (fish/players/rollout.py `World`) is the rules engine of
record (games/fish/rules.py `FishState`) in fast form.

Invariant: on random games (6 and 8 players, calls at any time or on one's turn, with and
without trolling, a held asked card counting for its set or not) driven by random legal moves of
the engine (asks that hit and miss, right and wrong calls, by any seat where the rules allow)
mixed with World's own policy moves, the two agree after every move: World's legal asks equal
the engine's without trolling (with it, they are the engine's asks for cards not held, and the
engine then allows more), must-call, every hand and count, the player to move, the uncalled
sets, the score, the end; World's running public record equals PublicRecord rebuilt from the
engine's events; every policy move is legal in the engine.
"""

import random

import pytest

from scrofazero.fish.players.rollout import PublicRecord, World
from scrofazero.games.fish.cards import set_cards, teammates
from scrofazero.games.fish.rules import FishState, Params

CASES = [(n, calls, held, True) for n in (6, 8) for calls in ("any_time", "own_turn")
         for held in (False, True)] + [(6, "any_time", True, False), (8, "own_turn", True, False)]
GAMES = 20  # random games per case


def bits(cards) -> int:
    return sum(1 << c for c in cards)


def random_move(game: FishState, world: World, rng: random.Random) -> tuple:
    """A World move tuple: the policy's (a third of the time), else a random legal engine move:
    a call by a seat the rules allow (right or wrong), or an ask (a hit half the time)."""
    if rng.random() < 1 / 3:
        return world.policy(rng)
    n = game.num_players
    callers = [s for s in range(n) if game.can_call(s)]
    if game.must_call or rng.random() < 0.15:
        caller = game.current_player if game.must_call else rng.choice(callers)
        k = rng.choice(game.uncalled_sets())
        team = teammates(caller, n)
        if all(game.holder(c) in team for c in set_cards(k)) and rng.random() < 0.7:
            named = tuple(game.holder(c) for c in set_cards(k))
        else:
            named = tuple(rng.choice(team) for _ in set_cards(k))
        return ("call", caller, k, named)
    asks = game.legal_asks()
    hits = [a for a in asks if game.holder(a[1]) == a[0]]
    target, card = rng.choice(hits if hits and rng.random() < 0.5 else asks)
    return ("ask", target, card)


def play_both(game: FishState, move: tuple) -> None:
    if move[0] == "ask":
        game.ask(move[1], move[2], asker=game.current_player)  # IllegalMove if not legal
    else:
        game.call(move[1], move[2], list(zip(set_cards(move[2]), move[3])))


def assert_same(game: FishState, world: World, held: bool) -> None:
    n = game.num_players
    assert world.done == game.is_terminal
    assert world.hand == [bits(game.hand(s)) for s in range(n)]
    assert world.count == list(game.hand_counts)
    assert tuple(world.holder) == game.holders
    assert sorted(world.uncalled) == game.uncalled_sets()
    assert tuple(world.score) == game.score  # World started at the deal: every set counts
    if game.is_terminal:
        return
    assert world.current == game.current_player
    asks = world.legal_asks()
    if held:
        assert set(asks) <= set(game.legal_asks())
        assert asks == [a for a in game.legal_asks() if a[1] not in game.hand(world.current)]
    else:
        assert asks == game.legal_asks()
        assert (not asks) == game.must_call
    public = PublicRecord(n, game.events, held)
    in_play = [c for c in range(len(world.holder)) if world.holder[c] >= 0]
    assert [world.pub[c] for c in in_play] == [public.loc[c] for c in in_play]
    assert [world.lacks[c] for c in in_play] == [public.lacks[c] for c in in_play]
    assert world.shown == public.shown
    assert world.pub_count == [sum(world.pub[c] == s for c in in_play) for s in range(n)]
    assert world.pub_team == [bits(c for c in in_play if world.pub[c] >= 0
                                   and world.pub[c] % 2 == t) for t in (0, 1)]


@pytest.mark.parametrize("num_players,calls,held,needs_other", CASES)
def test_world_equals_the_rules_engine_move_by_move(num_players, calls, held, needs_other):
    moves = calls_seen = wrong_seen = 0
    for seed in range(GAMES):
        rng = random.Random(seed)
        params = Params(num_players=num_players, calls=calls, ask_held_allowed=held,
                        ask_needs_other=needs_other)
        game = FishState.deal(params, seed, first_player=seed % num_players)
        world = World.start(num_players, game.holders, PublicRecord(num_players, [], held),
                            game.current_player, game.uncalled_sets(), held)
        assert_same(game, world, held)
        while not game.is_terminal:
            move = random_move(game, world, rng)
            play_both(game, move)
            world.play(move)
            assert_same(game, world, held)
            moves += 1
        calls_seen += len(game.call_order)
        wrong_seen += sum(not e.correct for e in game.events if hasattr(e, "correct"))
    assert moves > 300 and calls_seen == GAMES * (9 if num_players == 6 else 8) and wrong_seen > 0


def test_the_comparison_catches_a_turn_passing_slip(monkeypatch):
    """The check can fail: a World that hands an empty-handed player's turn to the next seat
    clockwise (not the next teammate with cards) is caught."""

    def clockwise(self):
        if self.uncalled and not self.count[self.current]:
            self.current = next((self.current + k) % self.n for k in range(1, self.n)
                                if self.count[(self.current + k) % self.n])

    monkeypatch.setattr(World, "_pass_turn", clockwise)
    with pytest.raises(AssertionError):
        test_world_equals_the_rules_engine_move_by_move(6, "any_time", False, True)
