"""Gongzhu for OpenSpiel: `python_gongzhu`, registered when scrofazero.openspiel is imported.

The deal is 52 explicit chance nodes; play is delegated to rules.GongzhuState; the observer writes
one seat's view with the other seats at (seat - player) % 4; `resample_from_infostate` draws the
hidden hands with sampling.uniform so OpenSpiel's IS-MCTS can search it.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from scrofazero.games.gongzhu.cards import (
    NUM_CARDS,
    SUITS,
    card_code,
    cards_to_mask,
    format_cards,
    mask_to_cards,
    scoring_bits_to_cards,
)
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.games.gongzhu.scoring import MAX_RETURN
from scrofazero.sampling.uniform import sample_hands

NUM_PLAYERS = 4

# Utility bounds (team differences, terminal states only, so the final scoring rule). One pile
# scores at most +600 (13 hearts +200, DJ +100, doubled by C10) and at least -600 (SQ and the
# twelve hearts H3..HA without the all-hearts bonus, -300, doubled by C10). The team difference
# peaks at +700: e.g. one pile with all hearts + DJ + C10 (+600) against a lone SQ (-100), or
# DJ + H2 (+100) against SQ + H3..HA + C10 (-600). Two +600-class piles cannot coexist (each
# needs C10), and an exhaustive search over all 4^16 ways to split the 16 scoring cards into
# four piles confirms 700 (tests/openspiel/test_openspiel_gongzhu.py). Returns sum to zero over
# the four seats.
MAX_UTILITY = float(MAX_RETURN)

GAME_TYPE = pyspiel.GameType(
    short_name="python_gongzhu",
    long_name="Python Gongzhu",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=NUM_PLAYERS,
    min_num_players=NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"leader": 0},
)
GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=NUM_CARDS,  # a player action is the card index played
    max_chance_outcomes=NUM_CARDS,  # a chance action is the card index dealt
    num_players=NUM_PLAYERS,
    min_utility=-MAX_UTILITY,
    max_utility=MAX_UTILITY,
    utility_sum=0.0,
    # OpenSpiel counts decisions only, not chance outcomes: 52 cards played. The 52 deal
    # nodes are reported by GongzhuGame.max_chance_nodes_in_history.
    max_game_length=NUM_CARDS,
)

_SHIFTS = np.arange(NUM_CARDS, dtype=np.uint64)


def _bits(mask: int, width: int) -> np.ndarray:
    """Bits 0..width-1 of a non-negative int as a float array [width]."""
    return ((np.uint64(mask) >> _SHIFTS[:width]) & np.uint64(1)).astype(np.float32)


class _Engine:
    """Holds the GongzhuState. OpenSpiel clones Python states with copy.deepcopy of every
    attribute; this makes that a GongzhuState.clone() (about 1 us instead of 70 us)."""

    __slots__ = ("gs",)

    def __init__(self, gs: GongzhuState):
        self.gs = gs

    def __deepcopy__(self, memo) -> _Engine:
        return _Engine(self.gs.clone())


class GongzhuGame(pyspiel.Game):
    """Gongzhu for OpenSpiel. Parameter `leader`: the seat leading the first trick (0..3)."""

    def __init__(self, params=None):
        params = dict(params or {})
        leader = params.get("leader", 0)
        if isinstance(leader, bool) or not isinstance(leader, int) or not 0 <= leader < 4:
            raise ValueError(
                f"python_gongzhu: parameter leader must be a seat 0..3, got {leader!r}"
            )
        super().__init__(GAME_TYPE, GAME_INFO, params)
        self.leader = leader

    def new_initial_state(self) -> GongzhuSpielState:
        return GongzhuSpielState(self)

    def max_chance_nodes_in_history(self) -> int:
        return NUM_CARDS

    def make_py_observer(self, iig_obs_type=None, params=None) -> GongzhuObserver:
        return GongzhuObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params
        )


class GongzhuSpielState(pyspiel.State):
    """A game of Gongzhu: 52 chance nodes deal card k to seat k // 13, then 52 card plays.

    `returns()` is the team difference per seat (GongzhuState.returns) at the end and 0 before:
    OpenSpiel's terminal reward model pays only at the end, so the mid-game valuation is not
    exposed here.
    """

    def __init__(self, game: GongzhuGame):
        super().__init__(game)
        self._leader = game.leader
        self._dealt: list[int] = []  # chance actions so far; card k went to seat k // 13
        self._undealt = (1 << NUM_CARDS) - 1
        self._engine: _Engine | None = None  # built once all 52 cards are dealt

    @property
    def game_state(self) -> GongzhuState | None:
        """The underlying rules state (None while dealing). Do not mutate it."""
        return None if self._engine is None else self._engine.gs

    def dealt(self) -> list[int]:
        """The chance actions applied so far (card indices in dealing order)."""
        return list(self._dealt)

    def hand_of(self, seat: int) -> int:
        """Current hand of `seat` as a 52-bit mask (the cards dealt so far during the deal)."""
        if self._engine is not None:
            return self._engine.gs.hands[seat]
        return cards_to_mask(self._dealt[13 * seat : 13 * seat + 13])

    # --- OpenSpiel API ---------------------------------------------------------------
    def current_player(self) -> int:
        if self._engine is None:
            return pyspiel.PlayerId.CHANCE
        gs = self._engine.gs
        if gs.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return gs.current_player

    def _legal_actions(self, player: int) -> list[int]:
        assert self._engine is not None  # asked at decision nodes only, after the deal
        gs = self._engine.gs
        if player != gs.current_player:
            return []
        return gs.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Uniform over the cards not dealt yet."""
        if self._engine is not None:
            raise ValueError("chance_outcomes: the deal is over, this is not a chance node")
        cards = mask_to_cards(self._undealt)
        p = 1.0 / len(cards)
        return [(c, p) for c in cards]

    def _apply_action(self, action: int) -> None:
        action = int(action)
        if self._engine is not None:
            self._engine.gs.apply(action)  # raises ValueError on an illegal card
            return
        if not 0 <= action < NUM_CARDS or not self._undealt >> action & 1:
            raise ValueError(f"chance action {action} is not an undealt card")
        self._dealt.append(action)
        self._undealt &= ~(1 << action)
        if len(self._dealt) == NUM_CARDS:
            hands = [cards_to_mask(self._dealt[13 * s : 13 * s + 13]) for s in range(4)]
            self._engine = _Engine(GongzhuState.from_hands(hands, self._leader))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"Deal {card_code(int(action))}"
        return card_code(int(action))

    def is_terminal(self) -> bool:
        return self._engine is not None and self._engine.gs.is_terminal()

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * NUM_PLAYERS
        assert self._engine is not None  # (is_terminal says so)
        return [float(r) for r in self._engine.gs.returns()]

    def __str__(self) -> str:
        hands = " | ".join(f"{s}: {format_cards(mask_to_cards(self.hand_of(s)))}" for s in range(4))
        if self._engine is None:
            return f"dealing {len(self._dealt)}/52; hands {hands}"
        gs = self._engine.gs
        return (
            f"played {len(gs.history)}/52; hands {hands}; "
            f"trick led by {gs.leader}: {format_cards(gs.trick)}; returns {gs.returns()}"
        )

    # --- resampling for IS-MCTS --------------------------------------------------------
    def resample_from_infostate(self, player_id: int, probability_sampler) -> GongzhuSpielState:
        """A new state, uniform among those `player_id` cannot tell apart from this one.

        The player keeps its own cards (in the order it was dealt them) and all public
        information; the other seats' cards are drawn with sampling.uniform.sample_hands
        (uniform over deals consistent with hand sizes and shown voids), and their dealing order
        is shuffled. During the deal the other seats' dealt cards are a uniform draw from the
        cards the player does not hold. Randomness: `probability_sampler` (a callable returning
        floats in [0, 1), e.g. pyspiel.UniformProbabilitySampler as IS-MCTS passes) is called
        twice and the two 53-bit integers seed a numpy Generator.
        """
        if isinstance(player_id, bool) or player_id not in range(NUM_PLAYERS):
            raise ValueError(f"resample_from_infostate: player_id must be 0..3, got {player_id!r}")
        rng = _rng_from_sampler(probability_sampler)
        if self._engine is None:
            return self._replay(self._resampled_partial_deal(player_id, rng), [])

        gs = self._engine.gs
        view = gs.view(player_id)
        if view.unseen:
            hands = [int(h) for h in sample_hands(view, 1, rng)[0]]  # [4] 52-bit masks
        else:
            hands = list(gs.hands)  # nothing hidden is left: the current hands are known
        sampled = GongzhuState.from_view(view, hands)  # checks the draw against the view
        initial = list(sampled.hands)
        for seat, card in sampled.history:
            initial[seat] |= 1 << card
        deal: list[int] = []
        for seat in range(NUM_PLAYERS):
            if seat == player_id:
                deal.extend(self._dealt[13 * seat : 13 * seat + 13])
            else:
                deal.extend(int(c) for c in rng.permutation(mask_to_cards(initial[seat])))
        new = self._replay(deal, [card for _, card in sampled.history])
        assert new._engine is not None and new._engine.gs.hands == sampled.hands
        return new

    def _resampled_partial_deal(self, player: int, rng: np.random.Generator) -> list[int]:
        """The dealt cards with every card not dealt to `player` redrawn uniformly."""
        own = self._dealt[13 * player : 13 * player + 13]
        others = [c for c in range(NUM_CARDS) if c not in set(own)]
        fresh = iter(int(c) for c in rng.permutation(others))
        return [c if k // 13 == player else next(fresh) for k, c in enumerate(self._dealt)]

    def _replay(self, deal: list[int], plays: list[int]) -> GongzhuSpielState:
        # Replaying through apply_action keeps OpenSpiel's C++ history and move number right.
        state = self.get_game().new_initial_state()
        for action in deal:
            state.apply_action(action)
        for action in plays:
            state.apply_action(action)
        return state


def _rng_from_sampler(probability_sampler) -> np.random.Generator:
    words = []
    for _ in range(2):
        u = float(probability_sampler())
        if not 0.0 <= u <= 1.0:
            raise ValueError(f"probability_sampler must return values in [0, 1], got {u}")
        words.append(int(u * (1 << 53)))
    return np.random.default_rng(words)


class GongzhuObserver:
    """Observation / information-state tensors and strings for one player (PyObserver protocol).

    Tensor pieces (float32, seats relative to the observer: row r is seat (player + r) % 4):
      player [4]          one-hot absolute seat of the observer
      hand [52]           own current hand (private_info SINGLE_PLAYER)
      hands [4, 52]       every current hand (private_info ALL_PLAYERS)
      leader [4]          relative seat leading the current trick (the first leader while dealing)
      trick [4, 52]       cards of the current trick by relative seat
      played [52]         every card played so far, current trick included
      captured [4, 16]    scoring cards captured, 16-bit layout of cards.SCORING_BIT
      voids [4, 4]        suits (S, H, D, C) each relative seat has shown to be void in
    With perfect_recall (the information state) also:
      first_leader [4]    relative seat that led the first trick
      played_by [52, 4]   who played each card (relative seat)
      trick_of_card [52, 13]  in which trick each card was played
    played_by + trick_of_card + first_leader fix the whole play order (the order inside a trick
    follows from its leader, the previous trick's winner). Default observation: 400 floats;
    information state: 1288. Strings use absolute seats. The information state forgets the order
    in which the player's own cards were dealt (a hand is a set), as card games usually do.
    """

    def __init__(self, iig_obs_type, params):
        if params:
            raise ValueError(f"python_gongzhu observer takes no parameters, got {params}")
        self.private = iig_obs_type.private_info
        self.public = iig_obs_type.public_info
        self.perfect_recall = iig_obs_type.perfect_recall
        pieces = [("player", (4,))]
        if self.private == pyspiel.PrivateInfoType.SINGLE_PLAYER:
            pieces.append(("hand", (52,)))
        elif self.private == pyspiel.PrivateInfoType.ALL_PLAYERS:
            pieces.append(("hands", (4, 52)))
        if self.public:
            pieces += [("leader", (4,)), ("trick", (4, 52)), ("played", (52,))]
            pieces += [("captured", (4, 16)), ("voids", (4, 4))]
            if self.perfect_recall:
                pieces += [("first_leader", (4,)), ("played_by", (52, 4))]
                pieces.append(("trick_of_card", (52, 13)))
        sizes = [int(np.prod(shape)) for _, shape in pieces]
        self.tensor = np.zeros(sum(sizes), np.float32)
        self.dict = {}
        start = 0
        for (name, shape), size in zip(pieces, sizes):
            self.dict[name] = self.tensor[start : start + size].reshape(shape)
            start += size

    def set_from(self, state: GongzhuSpielState, player: int) -> None:
        """Write `state` as seen by `player` into `tensor` (and its views in `dict`)."""
        self.tensor.fill(0.0)
        d = self.dict
        d["player"][player] = 1.0
        if "hand" in d:
            d["hand"][:] = _bits(state.hand_of(player), NUM_CARDS)
        if "hands" in d:
            for seat in range(4):
                d["hands"][(seat - player) % 4] = _bits(state.hand_of(seat), NUM_CARDS)
        if not self.public:
            return
        gs = state.game_state
        if gs is None:
            d["leader"][(state._leader - player) % 4] = 1.0
            if self.perfect_recall:
                d["first_leader"][(state._leader - player) % 4] = 1.0
            return
        d["leader"][(gs.leader - player) % 4] = 1.0
        for i, card in enumerate(gs.trick):
            d["trick"][(gs.leader + i - player) % 4, card] = 1.0
        for seat in range(4):
            d["captured"][(seat - player) % 4] = _bits(gs.piles[seat], 16)
            d["voids"][(seat - player) % 4] = _bits(gs.voids[seat], 4)
        for i, (seat, card) in enumerate(gs.history):
            d["played"][card] = 1.0
            if self.perfect_recall:
                d["played_by"][card, (seat - player) % 4] = 1.0
                d["trick_of_card"][card, i // 4] = 1.0
        if self.perfect_recall:
            d["first_leader"][(gs.first_leader - player) % 4] = 1.0

    def string_from(self, state: GongzhuSpielState, player: int) -> str:
        """`state` as seen by `player`, as text (absolute seats)."""
        parts = [f"p{player}"]
        if "hand" in self.dict:
            parts.append("hand " + format_cards(mask_to_cards(state.hand_of(player))))
        if "hands" in self.dict:
            parts += [f"hand{s} " + format_cards(mask_to_cards(state.hand_of(s))) for s in range(4)]
        if not self.public:
            return "; ".join(parts)
        gs = state.game_state
        if gs is None:
            parts.append(f"first leader {state._leader}; dealt {len(state._dealt)}/52")
            return "; ".join(parts)
        if self.perfect_recall:
            plays = [f"{s}:{card_code(c)}" for s, c in gs.history]
            tricks = [" ".join(plays[i : i + 4]) for i in range(0, len(plays), 4)]
            parts.append(f"first leader {gs.first_leader}; history " + " | ".join(tricks))
        else:
            parts.append(f"played {format_cards(mask_to_cards(_played_mask(gs)))}")
            parts.append(f"trick led by {gs.leader}: {format_cards(gs.trick)}")
            for seat in range(4):
                if gs.piles[seat]:
                    pile = format_cards(scoring_bits_to_cards(gs.piles[seat]))
                    parts.append(f"pile{seat} {pile}")
                if gs.voids[seat]:
                    voids = "".join(SUITS[s] for s in range(4) if gs.voids[seat] >> s & 1)
                    parts.append(f"void{seat} {voids}")
        return "; ".join(parts)


def _played_mask(gs: GongzhuState) -> int:
    mask = 0
    for _, card in gs.history:
        mask |= 1 << card
    return mask

