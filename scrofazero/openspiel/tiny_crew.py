"""Tiny Crew for OpenSpiel: `python_tiny_crew`, registered when scrofazero.openspiel is imported.

Dealing is 12 chance nodes in card order R1..S3; the outcome of node k is the seat receiving
card k, with probability proportional to the seat's free slots, so every one of the 34,650 deals
is reached exactly once with probability 1/34650. Play is delegated to
games.tiny_crew.rules.TinyCrewState. Parameters: `leader` ("seat0" or "captain"), `t1` and `t2`
(the seats owning the tasks). Identical utility: every seat gets 1 if all tasks succeed, else 0.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from scrofazero.games.tiny_crew.rules import (
    HAND_SIZE,
    NUM_CARDS,
    NUM_SEATS,
    STATUS_NAMES,
    Params,
    TinyCrewState,
    card_id,
    card_name,
)

DEFAULTS = {"leader": "seat0", "t1": 0, "t2": 1}

GAME_TYPE = pyspiel.GameType(
    short_name="python_tiny_crew",
    long_name="Python Tiny Crew",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.IDENTICAL,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=NUM_SEATS,
    min_num_players=NUM_SEATS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULTS,
)
GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=NUM_CARDS,  # a play is the card id
    max_chance_outcomes=NUM_SEATS,  # a deal step is the seat receiving the next card
    num_players=NUM_SEATS,
    min_utility=0.0,
    max_utility=1.0,
    max_game_length=NUM_CARDS,
)


def params_from(raw: dict) -> Params:
    """Game parameters -> rules.Params, with errors that name the parameter."""
    unknown = set(raw) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"python_tiny_crew: unknown parameter(s) {sorted(unknown)}; "
                         f"known: {sorted(DEFAULTS)}")
    merged = {**DEFAULTS, **raw}
    for name in ("t1", "t2"):
        seat = merged[name]
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < NUM_SEATS:
            raise ValueError(f"python_tiny_crew: parameter {name} must be a seat 0..2, "
                             f"got {seat!r}")
    try:
        return Params(leader=merged["leader"], t1_seat=merged["t1"], t2_seat=merged["t2"])
    except ValueError as err:
        raise ValueError(f"python_tiny_crew: {err}") from None


class TinyCrewGame(pyspiel.Game):
    def __init__(self, params=None):
        self.rules_params = params_from(dict(params or {}))
        super().__init__(GAME_TYPE, GAME_INFO, params or {})

    def new_initial_state(self) -> TinyCrewSpielState:
        return TinyCrewSpielState(self)

    def max_chance_nodes_in_history(self) -> int:
        return NUM_CARDS

    def make_py_observer(self, iig_obs_type=None, params=None) -> TinyCrewObserver:
        return TinyCrewObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class TinyCrewSpielState(pyspiel.State):
    def __init__(self, game: TinyCrewGame):
        super().__init__(game)
        self._params = game.rules_params
        self._owners: list[int] = []  # chance outcomes so far: owner of card k
        self._game: TinyCrewState | None = None

    @property
    def rules_state(self) -> TinyCrewState | None:
        return self._game

    def current_player(self) -> int:
        if self._game is None:
            return pyspiel.PlayerId.CHANCE
        if self._game.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return self._game.current_player

    def _legal_actions(self, player: int) -> list[int]:
        return self._game.legal_actions() if self._game is not None else []

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = NUM_CARDS - len(self._owners)
        free = [HAND_SIZE - self._owners.count(s) for s in range(NUM_SEATS)]
        return [(s, free[s] / left) for s in range(NUM_SEATS) if free[s]]

    def _apply_action(self, action: int) -> None:
        action = int(action)
        if self._game is None:
            # Checked before anything changes: a seat out of range or already holding four
            # cards would corrupt the deal (as python_gongzhu refuses a card already dealt).
            seats = [s for s, _ in self.chance_outcomes()]
            if action not in seats:
                raise ValueError(
                    f"chance action {action} is not a seat with a free slot for card "
                    f"{card_name(len(self._owners))}; legal: {seats}")
            self._owners.append(action)
            if len(self._owners) == NUM_CARDS:
                self._game = TinyCrewState(self._owners, self._params)
        else:
            self._game.apply(action)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"{card_name(len(self._owners))}->p{action}"
        return card_name(action)

    def is_terminal(self) -> bool:
        return self._game is not None and self._game.is_terminal()

    def returns(self) -> list[float]:
        if self._game is None or not self.is_terminal():
            return [0.0] * NUM_SEATS
        return self._game.returns()

    def hand_of(self, seat: int) -> int:
        """Current hand of `seat` as a 12-bit mask (cards dealt so far while dealing)."""
        if self._game is not None:
            return self._game.hands[seat]
        return sum(1 << c for c, s in enumerate(self._owners) if s == seat)

    def initial_hand_of(self, seat: int) -> int:
        if self._game is not None:
            return self._game.initial_hands[seat]
        return self.hand_of(seat)

    def __str__(self) -> str:
        if self._game is None:
            return f"dealing: {len(self._owners)}/12 cards dealt"
        return str(self._game)


def _names(mask: int) -> str:
    return " ".join(card_name(c) for c in range(NUM_CARDS) if mask >> c & 1) or "-"


def _bits(mask: int) -> np.ndarray:
    return ((mask >> np.arange(NUM_CARDS)) & 1).astype(np.float32)


def key_from_info_string(text: str) -> int:
    """Our compiled information-state key (tiny_crew/fast/state.py) from an information state
    string of this game, so that OpenSpiel's policies can be evaluated exactly."""
    fields = dict(part.split(" ", 1) for part in text.split("; ")[1:])
    hand = sum(1 << card_id(n) for n in fields["hand"].split() if n != "-")
    plays = [card_id(n) for n in fields["plays"].split() if n != "-"]
    key = hand | (int(fields["first"]) << 12) | (len(plays) << 14)
    for j, c in enumerate(plays):
        key |= c << (18 + 4 * j)
    return key


class TinyCrewObserver:
    """Tensors and strings for one player.

    Information state (perfect recall), 3 + 12 + 3 + 6 + 144 = 168 floats: player one-hot [3],
    own initial hand [12], first leader [3] (relative seat), task owners [2, 3] (relative seat),
    the plays in order [12, 12] (row j: the j-th card played). String: "p<seat>; hand <initial
    hand>; first <seat>; plays <cards in order>" (absolute seats; during the deal, the cards
    received so far and how many were dealt).
    Observation, 3 + 12 + 36 + 36 + 12 + 6 + 3 = 108 floats: player [3], own current hand [12],
    current trick by relative seat [3, 12], cards played by each relative seat [3, 12], voids
    shown [3, 4], task status [2, 3] (pending, success, failed), current leader [3].
    """

    def __init__(self, iig_obs_type, params):
        if params:
            raise ValueError(f"python_tiny_crew observer takes no parameters, got {params}")
        self.perfect_recall = iig_obs_type.perfect_recall
        if self.perfect_recall:
            pieces = [("player", (3,)), ("hand", (12,)), ("first", (3,)), ("tasks", (2, 3)),
                      ("plays", (12, 12))]
        else:
            pieces = [("player", (3,)), ("hand", (12,)), ("trick", (3, 12)),
                      ("played", (3, 12)), ("voids", (3, 4)), ("status", (2, 3)),
                      ("leader", (3,))]
        sizes = [int(np.prod(shape)) for _, shape in pieces]
        self.tensor = np.zeros(sum(sizes), np.float32)
        self.dict, start = {}, 0
        for (name, shape), size in zip(pieces, sizes):
            self.dict[name] = self.tensor[start: start + size].reshape(shape)
            start += size

    def set_from(self, state: TinyCrewSpielState, player: int) -> None:
        self.tensor.fill(0.0)
        d, g = self.dict, state.rules_state
        d["player"][player] = 1.0
        rel = lambda seat: (seat - player) % NUM_SEATS  # noqa: E731
        if self.perfect_recall:
            d["hand"][:] = _bits(state.initial_hand_of(player))
            p = state._params
            d["tasks"][0, rel(p.t1_seat)] = d["tasks"][1, rel(p.t2_seat)] = 1.0
            if g is not None:
                d["first"][rel(g.first_leader)] = 1.0
                for j, c in enumerate(g.history):
                    d["plays"][j, c] = 1.0
            return
        d["hand"][:] = _bits(state.hand_of(player))
        if g is None:
            return
        for i, c in enumerate(g.trick):
            d["trick"][rel(g.leader + i), c] = 1.0
        replay = TinyCrewState(g.owners, g.params)
        for c in g.history:
            seat = replay.current_player
            if replay.trick and c // 3 != replay.trick[0] // 3:
                d["voids"][rel(seat), replay.trick[0] // 3] = 1.0
            d["played"][rel(seat), c] = 1.0
            replay.apply(c)
        for t in range(2):
            d["status"][t, g.status[t]] = 1.0
        d["leader"][rel(g.leader)] = 1.0

    def string_from(self, state: TinyCrewSpielState, player: int) -> str:
        g = state.rules_state
        if self.perfect_recall:
            if g is None:
                return (f"p{player}; dealt {len(state._owners)}; "
                        f"hand {_names(state.hand_of(player))}")
            return (f"p{player}; hand {_names(g.initial_hands[player])}; "
                    f"first {g.first_leader}; plays "
                    + (" ".join(card_name(c) for c in g.history) or "-"))
        if g is None:
            return f"p{player}; hand {_names(state.hand_of(player))}"
        trick = " ".join(card_name(c) for c in g.trick) or "-"
        return (f"p{player}; hand {_names(g.hands[player])}; leader {g.leader}; "
                f"trick {trick}; T1 {STATUS_NAMES[g.status[0]]}; T2 {STATUS_NAMES[g.status[1]]}")

