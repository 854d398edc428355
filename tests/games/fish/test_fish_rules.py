"""Fish rules engine (scrofazero.games.fish.rules).

Invariants: random legal play over many seeds, both table sizes, both call modes and the
trolling variants: cards are conserved (every card in exactly one hand or in a called set),
hand counts match the hands, a legal move exists until the end (an ask, or a call when
must_call), legal_asks equals the brute-force set of accepted asks, the game terminates, each
set is called once, the score sums to the number of sets, returns follow the score, and the
same seed gives the same game. Every IllegalMove rule is raised by a hand-built position with
its rule id and leaves the state unchanged. Empty hands pass the turn to the next teammate,
then to the other team, which must call; a scripted game has a known score; 4-4 is a draw;
Params and deals are validated.
"""

import random

import pytest
from fish_play import random_move, truth

from scrofazero.games.fish.cards import card_id, num_sets, set_cards, team_of
from scrofazero.games.fish.events import Ask, Call
from scrofazero.games.fish.rules import FishState, IllegalMove, Params

# seat s holds cards s, s+8, ..., s+40: every seat holds one card of six sets
STRIPES = [[s + 8 * k for k in range(6)] for s in range(8)]
# seat s holds the whole set s
BLOCKS = [list(set_cards(s)) for s in range(8)]


def c(code: str) -> int:
    return card_id(code)


def check_invariants(state: FishState) -> None:
    n = state.num_players
    hands = [state.hand(s) for s in range(n)]
    in_hands = [card for hand in hands for card in hand]
    called = [card for s in state.called for card in set_cards(s)]
    assert sorted(in_hands + called) == list(range(num_sets(n) * 6))
    assert state.hand_counts == tuple(len(h) for h in hands)
    for seat, hand in enumerate(hands):
        assert all(state.holder(card) == seat for card in hand)
    assert len(set(state.call_order)) == len(state.call_order)
    assert sum(state.score) == len(state.call_order)
    if state.is_terminal:
        assert state.legal_asks() == [] and not state.must_call
        return
    assert state.hand_counts[state.current_player] > 0
    asks = state.legal_asks()
    assert state.must_call == (not asks)
    assert asks or state.can_call(state.current_player)


def brute_force_asks(state: FishState) -> list[tuple[int, int]]:
    accepted = []
    for target in range(state.num_players):
        for card in range(num_sets(state.num_players) * 6):
            try:
                state.clone().ask(target, card)
            except IllegalMove:
                continue
            accepted.append((target, card))
    return accepted


def play_random(params: Params, seed: int, check_every: int = 0) -> FishState:
    state = FishState.deal(params, seed)
    rng = random.Random(seed)
    for step in range(5000):
        check_invariants(state)
        if check_every and step % check_every == 0:
            assert state.legal_asks() == brute_force_asks(state)
        if state.is_terminal:
            return state
        before = sum(state.hand_counts)
        random_move(state, rng)
        event = state.events[-1]
        if isinstance(event, Call):
            assert sum(event.removed) == 6 == before - sum(state.hand_counts)
    raise AssertionError(f"seed {seed}: game did not end")


CONFIGS = [Params(num_players=n, calls=calls) for n in (6, 8) for calls in ("any_time", "own_turn")]
CONFIGS += [Params(num_players=8, ask_held_allowed=True),
            Params(num_players=6, ask_held_allowed=True, ask_needs_other=False, calls="own_turn")]


def config_id(params: Params) -> str:
    held = "held" if params.ask_held_allowed else "no-troll"
    return f"{params.num_players}p-{params.calls}-{held}{'' if params.ask_needs_other else '-own'}"


@pytest.mark.parametrize("params", CONFIGS, ids=config_id)
def test_random_play_conformance(params):
    for seed in range(25):
        state = play_random(params, seed, check_every=37 if seed < 3 else 0)
        assert state.is_terminal
        assert sorted(state.call_order) == list(range(num_sets(params.num_players)))
        assert sum(state.score) == num_sets(params.num_players)
        s0, s1 = state.score
        winner = None if s0 == s1 else (0 if s0 > s1 else 1)
        for seat, value in enumerate(state.returns()):
            assert value == (0.0 if winner is None else (1.0 if team_of(seat) == winner else -1.0))
        assert all(isinstance(e, Ask) or e.removed is not None for e in state.events)
        again = play_random(params, seed)
        assert again.snapshot() == state.snapshot()


def test_deal_is_seeded_and_full():
    for n in (6, 8):
        a, b = FishState.deal(Params(num_players=n), 7), FishState.deal(Params(num_players=n), 7)
        assert a.initial_hands == b.initial_hands
        assert FishState.deal(Params(num_players=n), 8).initial_hands != a.initial_hands
        cards = sorted(card for hand in a.initial_hands for card in hand)
        assert cards == list(range(num_sets(n) * 6))
        assert set(a.hand_counts) == {54 // 6 if n == 6 else 6}


def test_new_validates_the_deal():
    params = Params()
    with pytest.raises(ValueError, match="8 hands, got 7"):
        FishState.new(params, STRIPES[:7])
    with pytest.raises(ValueError, match="hand sizes"):
        FishState.new(params, [STRIPES[0][:5]] + STRIPES[1:])
    dup = [list(h) for h in STRIPES]
    dup[1][0] = dup[0][0]
    with pytest.raises(ValueError, match="dealt twice"):
        FishState.new(params, dup)
    eights = [list(h) for h in STRIPES]
    eights[0][0] = c("D8")
    with pytest.raises(ValueError, match="not in the 8-player deck"):
        FishState.new(params, eights)
    with pytest.raises(ValueError, match="first_player"):
        FishState.new(params, STRIPES, first_player=8)


@pytest.mark.parametrize("kwargs,field", [
    ({"num_players": 7}, "num_players"), ({"calls": "whenever"}, "calls"),
    ({"ask_held_allowed": "yes"}, "ask_held_allowed"), ({"public_counts": 1}, "public_counts"),
    ({"ask_needs_other": None}, "ask_needs_other")])
def test_params_errors(kwargs, field):
    with pytest.raises(ValueError, match=field):
        Params(**kwargs)


def expect_illegal(state: FishState, rule: str, move, *args, **kwargs) -> None:
    before = state.snapshot()
    with pytest.raises(IllegalMove) as info:
        getattr(state, move)(*args, **kwargs)
    assert info.value.rule == rule
    assert str(info.value)
    assert state.snapshot() == before


def test_illegal_asks():
    state = FishState.new(Params(), STRIPES)  # seat 0: D2 C4 H6 D9 CJ HK
    expect_illegal(state, "not-your-turn", "ask", 1, c("D3"), asker=2)
    expect_illegal(state, "ask-teammate", "ask", 2, c("D4"))
    expect_illegal(state, "ask-teammate", "ask", 0, c("D3"))
    expect_illegal(state, "no-such-seat", "ask", 8, c("D3"))
    expect_illegal(state, "asker-holds-card", "ask", 1, c("D2"))
    expect_illegal(state, "asker-lacks-set", "ask", 1, c("S2"))
    expect_illegal(state, "card-not-in-play", "ask", 1, c("D8"))
    state.call(0, 0, {card: 0 for card in set_cards(0)})
    expect_illegal(state, "card-not-in-play", "ask", 1, c("D3"))
    # seat 1 runs out of cards once the six sets it holds cards of are called
    for set_id in (1, 2, 4, 5, 6):
        state.call(1, set_id, {card: 1 for card in set_cards(set_id)})
    assert state.hand_counts[1] == 0 and state.current_player == 2
    expect_illegal(state, "target-has-no-cards", "ask", 1, c("S4"))


def test_illegal_calls():
    state = FishState.new(Params(calls="own_turn"), STRIPES)
    right = truth(state, 0)
    expect_illegal(state, "call-not-your-turn", "call", 1, 0, {card: 1 for card in set_cards(0)})
    expect_illegal(state, "no-such-seat", "call", 9, 0, right)
    expect_illegal(state, "no-such-set", "call", 0, 8, right)
    expect_illegal(state, "call-incomplete", "call", 0, 0, list(right.items())[:5])
    expect_illegal(state, "call-incomplete", "call", 0, 0, list(right.items())[:5] + [(0, 0)])
    expect_illegal(state, "call-incomplete", "call", 0, 1, right)
    expect_illegal(state, "call-names-opponent", "call", 0, 0, right)  # D3 is with seat 1
    event = state.call(0, 0, {card: 0 for card in set_cards(0)})
    assert not event.correct and state.called == {0: 1}
    expect_illegal(state, "set-already-called", "call", 0, 0, {card: 0 for card in set_cards(0)})


def test_must_call_and_game_over():
    state = FishState.new(Params(), BLOCKS)  # everyone holds one whole set: nothing to ask
    assert state.must_call and state.legal_asks() == [] and state.can_call(0)
    expect_illegal(state, "must-call", "ask", 1, c("C2"))
    assert not FishState.new(Params(ask_held_allowed=True), BLOCKS).must_call
    for set_id in range(8):
        state.call(set_id, set_id, {card: set_id for card in set_cards(set_id)})
    assert state.is_terminal and state.score == (4, 4)
    assert state.returns() == (0.0,) * 8  # a draw
    expect_illegal(state, "game-over", "ask", 1, c("C2"))
    expect_illegal(state, "game-over", "call", 0, 0, {card: 0 for card in set_cards(0)})


def test_turn_passes_to_next_teammate_then_other_team():
    state = FishState.new(Params(calls="own_turn"), BLOCKS)
    state.call(0, 0, {card: 0 for card in set_cards(0)})
    assert state.current_player == 2 and state.turn_passed_from == 0
    state.call(2, 4, {card: 4 for card in set_cards(4)})  # seat 4 is out: still seat 2
    assert state.current_player == 2
    state.call(2, 2, {card: 2 for card in set_cards(2)})  # seat 4 is out: on to seat 6
    assert state.current_player == 6 and state.turn_passed_from == 2
    state.call(6, 6, {card: 6 for card in set_cards(6)})
    # team 0 is out: the next seat clockwise with cards (7) gets the turn and must call
    assert state.current_player == 7 and state.must_call
    assert not state.can_call(1) and state.can_call(7)
    for set_id in (7, 1, 3, 5):
        assert state.must_call
        state.call(state.current_player, set_id, {card: set_id for card in set_cards(set_id)})
    assert state.is_terminal and state.score == (4, 4)


def test_turn_after_failed_ask_and_empty_asker():
    state = FishState.new(Params(), STRIPES)
    state.ask(1, c("C2"))  # C2 is seat 6's: turn passes to the asked seat
    assert state.current_player == 1 and state.turn_passed_from is None
    # a call by another seat under any_time leaves the turn with seat 1
    state.call(4, 3, {card: 4 for card in set_cards(3)})
    assert state.current_player == 1 and state.score == (0, 1)


def test_scripted_game_known_score():
    state = FishState.new(Params(), STRIPES)
    assert state.ask(1, c("D3")) == Ask(0, 1, c("D3"), True)
    assert state.ask(3, c("D5")).success and state.ask(5, c("D7")).success
    assert state.hand(0) == tuple(sorted([c("D2"), c("D3"), c("D5"), c("D7"), c("C4"), c("H6"),
                                          c("D9"), c("CJ"), c("HK")]))
    assert state.hand_counts == (9, 5, 6, 5, 6, 5, 6, 6)
    call = state.call(0, 0, {c("D2"): 0, c("D3"): 0, c("D4"): 2, c("D5"): 0, c("D6"): 4,
                             c("D7"): 0})
    assert call.correct and call.removed == (4, 0, 1, 0, 1, 0, 0, 0)
    assert state.ask(1, c("C2")) == Ask(0, 1, c("C2"), False)
    assert state.current_player == 1
    wrong = state.call(1, 1, [(card, 1) for card in set_cards(1)])
    assert not wrong.correct
    for set_id in range(2, 8):
        state.call(0, set_id, {card: 0 for card in set_cards(set_id)})
    assert state.is_terminal and state.score == (2, 6)
    assert state.returns() == (-1.0, 1.0) * 4
    assert len(state.events) == 12 and state.call_order == list(range(8))


def test_hidden_counts_and_clone():
    state = FishState.new(Params(public_counts=False), STRIPES)
    copy = state.clone()
    event = copy.call(0, 0, {card: 0 for card in set_cards(0)})
    assert event.removed is None
    assert state.events == [] and state.hand_counts == (6,) * 8 and copy.hand_counts[0] == 5


def test_ask_held_allowed_variant():
    state = FishState.new(Params(ask_held_allowed=True), STRIPES)
    # seat 0 holds D2 and no other low diamond: it may not ask for D2 (needs another card)
    expect_illegal(state, "asker-lacks-set", "ask", 1, c("D2"))
    assert state.ask(1, c("D3")).success
    assert (1, c("D2")) in state.legal_asks()
    event = state.ask(3, c("D2"))  # trolling: asks for a card it holds, and so fails
    assert not event.success and state.current_player == 3
    loose = FishState.new(Params(ask_held_allowed=True, ask_needs_other=False), STRIPES)
    assert (1, c("D2")) in loose.legal_asks()
    assert not loose.ask(1, c("D2")).success and loose.current_player == 1
