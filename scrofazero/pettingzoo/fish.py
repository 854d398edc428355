"""Fish (Literature) as a PettingZoo AEC environment, in the style of PettingZoo's classic games.

Agents "player_0".. are seats 0..n-1 (n = 6 or 8; teams: even seats and odd seats). Calls are
made on one's own turn (rules Params calls="own_turn": an AEC environment has one agent to move)
and hand counts are public. A call takes seven moves of the caller, so that the action space
stays small (Discrete(n * cards + sets + team size)):
- ask: action target * cards + card, one of FishState.legal_asks();
- call: action n * cards + set, one of FishState.legal_call_sets(caller);
- then six placements, one per card of the set in id order: action n * cards + sets + k names
  the k-th seat of the caller's team (seats team, team + 2, ..); after the sixth the rules
  engine judges the call. Every move goes through rules.FishState.
The observation of a seat is relative to it (other seats at (seat - me) % n): its hand, the hand
counts / cards, the sets each team got (own team first), the public ask history compressed to
which seat is known to hold or to lack each card in play, the player to move and the call being
placed. Rewards are 0 until the last set is called; then FishState.returns(): +1 for each seat
of the winning team, -1 for the losers, 0 for a draw.
"""

from __future__ import annotations

import numpy as np
from pettingzoo import AECEnv

from scrofazero.games.fish.cards import SET_SIZE, card_code, num_cards, num_sets, set_cards
from scrofazero.games.fish.events import Ask
from scrofazero.games.fish.rules import NUM_TEAMS, FishState, Params
from scrofazero.pettingzoo.turns import RENDER_MODES, TurnBasedEnv, wrapped


def env(**kwargs) -> AECEnv:
    """The wrapped environment: illegal moves end the game (-1 to the mover), out-of-range
    actions raise, and the AEC call order is enforced."""
    return wrapped(raw_env(**kwargs))


class Layout:
    """The action indices of one table size: asks, then calls, then placements."""

    def __init__(self, num_players: int):
        self.n = num_players
        self.cards = num_cards(num_players)
        self.sets = num_sets(num_players)
        self.team_size = num_players // NUM_TEAMS
        self.call_base = self.n * self.cards
        self.place_base = self.call_base + self.sets
        self.size = self.place_base + self.team_size

    def ask(self, target: int, card: int) -> int:
        return target * self.cards + card

    def call(self, set_id: int) -> int:
        return self.call_base + set_id

    def place(self, k: int) -> int:
        return self.place_base + k

    def obs_size(self) -> int:
        # hand, counts, sets per team, holds and lacks per seat and card, mover, pending call
        return (self.cards + self.n + NUM_TEAMS * self.sets + 2 * self.n * self.cards + self.n
                + self.sets + SET_SIZE * self.team_size)


def public_knowledge(state: FishState) -> tuple[np.ndarray, np.ndarray]:
    """(holds, lacks) [n, cards] from the public events alone: holds[s, c] = 1 when seat s got
    card c by a successful ask and has not been seen to lose it; lacks[s, c] = 1 when s was
    asked for c and did not have it, or (no trolling) s asked for c, or s gave c away, and c has
    not come to s since. Cards of called sets are all zero."""
    n, cards = state.num_players, num_cards(state.num_players)
    holds = np.zeros((n, cards), np.float32)
    lacks = np.zeros((n, cards), np.float32)
    for event in state.events:
        if isinstance(event, Ask):
            card = event.card
            if event.success:
                holds[:, card] = 0.0
                holds[event.asker, card] = 1.0
                lacks[event.asker, card] = 0.0
                lacks[event.target, card] = 1.0
            else:
                lacks[event.target, card] = 1.0
                if not state.params.ask_held_allowed:
                    lacks[event.asker, card] = 1.0
        else:
            cols = list(set_cards(event.set_id))
            holds[:, cols] = 0.0
            lacks[:, cols] = 0.0
    return holds, lacks


class raw_env(TurnBasedEnv):
    """Fish for 6 or 8 agents. num_players, ask_held_allowed and ask_needs_other are the rules'
    Params (docs/fish.md); first_player moves first (default 0)."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "scrofazero_fish_v0",
                "is_parallelizable": False, "render_fps": 1}

    def __init__(self, render_mode: str | None = None, num_players: int = 8,
                 ask_held_allowed: bool = False, ask_needs_other: bool = True,
                 first_player: int = 0):
        super().__init__()
        self.params = Params(num_players=num_players, ask_held_allowed=ask_held_allowed,
                             ask_needs_other=ask_needs_other, calls="own_turn")
        FishState.deal(self.params, 0, first_player)  # refuses a bad first_player before play
        self.first_player = first_player
        self.layout = Layout(num_players)
        self._setup(render_mode, num_players, self.layout.obs_size(), self.layout.size, low=0.0)
        # None until reset(), which PettingZoo's API has come before any other call
        self.state_: FishState = None  # type: ignore[assignment]
        self.pending: tuple[int, list[int]] | None = None  # (set being called, seats named)

    def legal_actions(self) -> list[int]:
        """The actions of the player to move, ascending (empty at the end of the game)."""
        lay, state = self.layout, self.state_
        if self.pending is not None:
            return [lay.place(k) for k in range(lay.team_size)]
        asks = [lay.ask(t, c) for t, c in state.legal_asks()]
        calls = [lay.call(s) for s in state.legal_call_sets(state.current_player)]
        return sorted(asks + calls)

    def observe(self, agent):
        seat, lay, state = self.seat(agent), self.layout, self.state_
        mask = np.zeros(lay.size, np.int8)
        if seat == state.current_player and not state.is_terminal:
            mask[self.legal_actions()] = 1
        return {"observation": self._observation(seat), "action_mask": mask}

    def _observation(self, me: int) -> np.ndarray:
        lay, state = self.layout, self.state_
        order = [(me + k) % lay.n for k in range(lay.n)]
        hand = np.zeros(lay.cards, np.float32)
        hand[list(state.hand(me))] = 1.0
        counts = np.array([state.hand_counts[s] / lay.cards for s in order], np.float32)
        got = np.zeros((NUM_TEAMS, lay.sets), np.float32)
        for set_id, team in state.called.items():
            got[(team - me) % NUM_TEAMS, set_id] = 1.0
        holds, lacks = public_knowledge(state)
        mover = np.zeros(lay.n, np.float32)
        mover[(state.current_player - me) % lay.n] = 1.0
        calling = np.zeros(lay.sets, np.float32)
        placed = np.zeros((SET_SIZE, lay.team_size), np.float32)
        if self.pending is not None:
            calling[self.pending[0]] = 1.0
            for i, k in enumerate(self.pending[1]):
                placed[i, k] = 1.0
        return np.concatenate([hand, counts, got.ravel(), holds[order].ravel(),
                               lacks[order].ravel(), mover, calling, placed.ravel()])

    def reset(self, seed: int | None = None, options=None):
        """A new shuffled deal; the same seed gives the same deal."""
        self._reseed(seed)
        self.state_ = FishState.deal(self.params, self._rng, self.first_player)
        self.pending = None
        self._begin_episode()

    def _over(self) -> bool:
        return self.state_.is_terminal

    def _returns(self):
        return self.state_.returns()

    def _mover(self) -> int:
        return self.state_.current_player
    def _move(self, action: int) -> None:
        """One move of the player to move; the rules engine refuses an illegal ask or call."""
        lay, state, me = self.layout, self.state_, self.state_.current_player
        if self.pending is not None:
            if not lay.place_base <= action < lay.size:
                raise ValueError(f"action {action} is not a placement: seat {me} is calling a set")
            set_id, named = self.pending
            named.append(action - lay.place_base)
            if len(named) == SET_SIZE:
                team = me % NUM_TEAMS
                pairs = [(c, team + NUM_TEAMS * k) for c, k in zip(set_cards(set_id), named)]
                self.pending = None
                state.call(me, set_id, pairs)
        elif action >= lay.place_base:
            raise ValueError(f"action {action} places a card but no call is under way")
        elif action >= lay.call_base:
            set_id = action - lay.call_base
            if set_id not in state.legal_call_sets(me):
                raise ValueError(f"seat {me} may not call set {set_id} now")
            self.pending = (set_id, [])
        else:
            state.ask(action // lay.cards, action % lay.cards, asker=me)

    def _text(self) -> str:
        text = str(self.state_)
        if self.pending is not None:
            set_id, named = self.pending
            text += f"; calling set {set_id}: " + " ".join(
                f"{card_code(c)}->{k}" for c, k in zip(set_cards(set_id), named))
        return text
