"""Random legal Fish play for the Fish tests (rules, transcripts): a seeded move chooser that
exercises asks, right and wrong calls, and calls by other seats under calls="any_time"."""

import random

from scrofazero.games.fish.cards import set_cards, team_of, teammates
from scrofazero.games.fish.rules import FishState


def truth(state: FishState, set_id: int) -> dict[int, int]:
    return {card: state.holder(card) for card in set_cards(set_id)}


def random_move(state: FishState, rng: random.Random) -> None:
    """A random legal move: mostly asks; sometimes a call (right when the caller's team holds
    the set, else a random assignment), by any seat under any_time."""
    n = state.num_players
    asks = state.legal_asks()
    if asks and rng.random() > 0.06:
        state.ask(*rng.choice(asks))
        return
    any_time = state.params.calls == "any_time"
    seat = rng.randrange(n) if any_time and asks else state.current_player
    set_id = rng.choice(state.legal_call_sets(seat))
    mates = teammates(seat, n)
    assignment = {card: holder if team_of(holder) == team_of(seat) else rng.choice(mates)
                  for card, holder in truth(state, set_id).items()}
    state.call(seat, set_id, assignment)
