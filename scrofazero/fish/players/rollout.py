"""Rollouts of the Fish search player (fish/players/search.py): a determinized game on bitmask
hands and the default policy every seat plays in it.

Rollouts (`World`): the fast form of the rules engine of record, games/fish/rules.py (asks,
calls, turn passing, forced calls, score), on bitmask hands of the sampled deal, without its
legality checks and event records. tests/fish/test_rollout_engine.py proves the two equal move
by move on random games (6 and 8 players, calls at any time or on one's turn, with and without
trolling): the same legal asks (without trolling; with it the rules also allow held cards, which
rollouts never ask), the same hands, player to move, called sets, score and end, and World's
running public record equal to PublicRecord rebuilt from the engine's events. A rollout seat
calls only on its own turn, which is legal under both call rules.

Every seat plays the same default policy from its own hand and the public record: where
transferred cards are, which seats are known to lack a card (failed asks), which seats asked in
which set (so hold a card of it): call a set its hand and its team's public cards cover; take a
card publicly with an opponent; else ask for the card of its sets it lacks whose likeliest
opponent holder is likeliest, by counting each seat's unaccounted cards, times (1 + `boost`) for
a seat that asked in the card's set; when every ask is a certain miss by that count, any legal
ask (`World.legal_asks`), uniformly.
"""

from __future__ import annotations

import random

from scrofazero.games.fish.cards import num_cards, set_cards
from scrofazero.games.fish.events import Ask, Call

SET_MASKS = tuple(sum(1 << c for c in set_cards(k)) for k in range(9))


class PublicRecord:
    """What the whole table knows from the public record: where transferred cards are (until
    they move or their set is called) and which seats are known to lack which card."""

    def __init__(self, num_players: int, events, held_allowed: bool):
        deck = num_cards(num_players)
        self.loc = [-1] * deck
        self.lacks = [0] * deck
        self.shown = [0] * num_players  # bit k: the seat asked in set k (held a card of it)
        for e in events:
            if isinstance(e, Ask):
                self.shown[e.asker] |= 1 << (e.card // 6)
                if e.success:
                    self.loc[e.card], self.lacks[e.card] = e.asker, 0
                else:
                    self.lacks[e.card] |= 1 << e.target
                    if not held_allowed:
                        self.lacks[e.card] |= 1 << e.asker
            elif isinstance(e, Call):
                for c in set_cards(e.set_id):
                    self.loc[c], self.lacks[c] = -1, 0
                self.shown = [m & ~(1 << e.set_id) for m in self.shown]


class World:
    """A determinized game: the rules of games/fish/rules.py on bitmask hands, played by the default
    policy (module docstring). Scores count only sets called inside the rollout."""

    __slots__ = (
        "boost",
        "count",
        "current",
        "hand",
        "held_allowed",
        "holder",
        "lacks",
        "n",
        "pub",
        "pub_count",
        "pub_team",
        "score",
        "shown",
        "uncalled",
    )
    n: int
    holder: list[int]
    hand: list[int]
    count: list[int]
    pub: list[int]
    lacks: list[int]
    pub_team: list[int]
    pub_count: list[int]
    uncalled: list[int]
    score: list[int]
    current: int
    held_allowed: bool
    shown: list[int]
    boost: float

    @classmethod
    def start(cls, num_players, holders, public: PublicRecord, current, uncalled,
              held_allowed, boost: float = 2.0) -> World:
        w = cls.__new__(cls)
        w.shown, w.boost = list(public.shown), float(boost)
        w.n = num_players
        w.holder = [int(h) for h in holders]
        w.hand = [0] * num_players
        for c, h in enumerate(w.holder):
            if h >= 0:
                w.hand[h] |= 1 << c
        w.count = [m.bit_count() for m in w.hand]
        w.pub = [p if w.holder[c] >= 0 else -1 for c, p in enumerate(public.loc)]
        w.lacks = list(public.lacks)
        w.pub_team = [0, 0]
        w.pub_count = [0] * num_players
        for c, p in enumerate(w.pub):
            if p >= 0:
                w.pub_team[p & 1] |= 1 << c
                w.pub_count[p] += 1
        w.uncalled = list(uncalled)
        w.score = [0, 0]
        w.current = current
        w.held_allowed = held_allowed
        return w

    def copy(self) -> World:
        w = World.__new__(World)
        w.n, w.holder, w.hand, w.count = self.n, self.holder[:], self.hand[:], self.count[:]
        w.pub, w.lacks, w.pub_team = self.pub[:], self.lacks[:], self.pub_team[:]
        w.pub_count, w.uncalled, w.score = self.pub_count[:], self.uncalled[:], self.score[:]
        w.current, w.held_allowed = self.current, self.held_allowed
        w.shown, w.boost = self.shown[:], self.boost
        return w

    @property
    def done(self) -> bool:
        return not self.uncalled

    def value(self, team: int, leaf_weight: float) -> float:
        v = float(self.score[team] - self.score[1 - team])
        if leaf_weight and self.uncalled:
            mine = theirs = 0
            for s in range(self.n):
                if s & 1 == team:
                    mine |= self.hand[s]
                else:
                    theirs |= self.hand[s]
            for k in self.uncalled:
                m = SET_MASKS[k]
                v += leaf_weight * ((mine & m).bit_count() - (theirs & m).bit_count()) / 6.0
        return v

    # a move is ("ask", target, card) or ("call", caller, set, seats named for its 6 cards)

    def play(self, move: tuple) -> None:
        if move[0] == "ask":
            self.ask(move[1], move[2])
        else:
            _, caller, k, named = move
            self.call(caller, k, all(self.holder[c] == seat
                                     for c, seat in zip(set_cards(k), named)))

    def ask(self, target: int, card: int) -> None:
        s, bit = self.current, 1 << card
        self.shown[s] |= 1 << (card // 6)
        if self.holder[card] == target:
            self.hand[target] ^= bit
            self.hand[s] |= bit
            self.count[target] -= 1
            self.count[s] += 1
            self.holder[card] = s
            old = self.pub[card]
            if old >= 0:
                self.pub_count[old] -= 1
                self.pub_team[old & 1] &= ~bit
            self.pub[card] = s
            self.pub_count[s] += 1
            self.pub_team[s & 1] |= bit
            self.lacks[card] = 0
        else:
            self.lacks[card] |= (1 << target) | (0 if self.held_allowed else 1 << s)
            self.current = target
        self._pass_turn()

    def call(self, caller: int, k: int, correct: bool) -> None:
        for c in set_cards(k):
            h, bit = self.holder[c], 1 << c
            self.hand[h] &= ~bit
            self.count[h] -= 1
            self.holder[c] = -1
            p = self.pub[c]
            if p >= 0:
                self.pub_count[p] -= 1
                self.pub_team[p & 1] &= ~bit
                self.pub[c] = -1
        self.uncalled.remove(k)
        for seat in range(self.n):
            self.shown[seat] &= ~(1 << k)
        self.score[(caller & 1) if correct else 1 - (caller & 1)] += 1
        self._pass_turn()

    def _pass_turn(self) -> None:
        me, n = self.current, self.n
        if not self.uncalled or self.count[me]:
            return
        for k in list(range(2, n, 2)) + list(range(1, n, 2)):
            if self.count[(me + k) % n]:
                self.current = (me + k) % n
                return

    def legal_asks(self) -> list[tuple[int, int]]:
        """(target, card) asks of the player to move without trolling, by target then card: an
        opponent with cards, a card it lacks of a set it holds a card of. Equal to
        FishState.legal_asks when ask_held_allowed is off; with it on, the rules also allow held
        cards, which rollouts never ask. Empty: it must call (the policy's forced call)."""
        s = self.current
        hand = self.hand[s]
        cards = [c for k in self.uncalled if hand & SET_MASKS[k]
                 for c in set_cards(k) if not hand >> c & 1]
        targets = [t for t in range(1 - (s & 1), self.n, 2) if self.count[t]]
        return [(t, c) for t in targets for c in sorted(cards)] if not self.done else []

    def step(self, rng: random.Random) -> None:
        self.play(self.policy(rng))

    def policy(self, rng: random.Random) -> tuple:
        """The move of the player to move (module docstring): legal under either call rule
        (it only calls on its own turn)."""
        s = self.current
        team = s & 1
        hand = self.hand[s]
        known = hand | self.pub_team[team]
        for k in self.uncalled:  # a set it can place for certain
            m = SET_MASKS[k]
            if known & m == m:
                return ("call", s, k, tuple(self.holder[c] for c in set_cards(k)))
        opponents = [t for t in range(1 - team, self.n, 2) if self.count[t]]
        wanted = 0
        for k in self.uncalled:
            m = SET_MASKS[k]
            if hand & m:
                wanted |= m & ~hand
        if not opponents or not wanted:
            return self._forced_call()
        slots = [self.count[u] - self.pub_count[u] for u in range(self.n)]
        others = [u for u in range(self.n) if u != s and slots[u] > 0]
        boost, shown = self.boost, self.shown
        best, picks = -1.0, []
        w = wanted
        while w:
            low = w & -w
            c = low.bit_length() - 1
            w ^= low
            p = self.pub[c]
            if p >= 0:
                if p & 1 != team:
                    return ("ask", p, c)  # a card publicly with an opponent
                continue  # publicly with a teammate
            lacks, kbit = self.lacks[c], 1 << (c // 6)
            denom, top, top_t = 0.0, 0.0, -1
            for u in others:
                if lacks >> u & 1:
                    continue
                weight = slots[u] * (1.0 + boost) if shown[u] & kbit else float(slots[u])
                denom += weight
                if u & 1 != team and weight > top:
                    top, top_t = weight, u
            if top_t < 0:
                continue
            score = top / denom
            if score > best + 1e-12:
                best, picks = score, [(top_t, c)]
            elif score > best - 1e-12:
                picks.append((top_t, c))
        if not picks:  # only certain misses by counting: any legal ask
            picks = self.legal_asks()
        t, c = picks[rng.randrange(len(picks))] if len(picks) > 1 else picks[0]
        return ("ask", t, c)

    def _forced_call(self) -> tuple:
        """The set it knows most of: the cards it knows where they are, the rest guessed with
        the teammate (itself included) holding the most unaccounted cards."""
        s = self.current
        team = s & 1
        known = self.hand[s] | self.pub_team[team]
        k = max(self.uncalled, key=lambda k: (known & SET_MASKS[k]).bit_count())
        mates = [u for u in range(team, self.n, 2) if self.count[u]] or [s]
        guess = max(mates, key=lambda u: self.count[u] - self.pub_count[u])
        return ("call", s, k, tuple(self.holder[c] if known >> c & 1 else guess
                                    for c in set_cards(k)))
