"""Fish team matches: two player kinds, one per team, on seeded deals with seats rotated.

Each deal is played twice with the teams' players swapped (and the first player rotating over
the deals), so both kinds face the same cards from both sides. The runner owns the engine; the
players see only their views (FishState.view) and the public events (fish/players/protocol.py:
FishPlayer).
"""

from __future__ import annotations

import math
import time

import numpy as np

from scrofazero.fish.players.roster import make_fish_player
from scrofazero.games.fish.events import Event
from scrofazero.games.fish.rules import AskMove, FishState, Params


def play_game(params: Params, players: list, seed: int, first_player: int = 0,
              max_moves: int = 1000) -> dict:
    """One game; players[seat] already built. Past `max_moves` moves the player to move must
    call (so every game ends). Returns score, returns, moves and whether the cap was hit."""
    state = FishState.deal(params, np.random.default_rng(seed), first_player=first_player)
    for seat, player in enumerate(players):
        player.reset(params.num_players, seat, state.hand(seat),
                     ask_held_allowed=params.ask_held_allowed,
                     ask_needs_other=params.ask_needs_other)
    moves = 0
    while not state.is_terminal:
        event = play_move(state, players, force_call=moves >= max_moves)
        moves += 1
        for player in players:
            player.observe(event)
    return {"score": state.score, "returns": state.returns(), "moves": moves,
            "capped": moves > max_moves}


def play_move(state: FishState, players: list, force_call: bool = False) -> Event:
    """One move on `state`: under calls=any_time the first seat, from the player to move on,
    whose `call_now` calls; else the player to move's `act` (made to call when force_call).
    Returns the event (the players are not told)."""
    if state.params.calls == "any_time":
        n = state.num_players
        for seat in ((state.current_player + k) % n for k in range(n)):
            move = players[seat].call_now(state.view(seat))
            if move is not None:
                return state.call(seat, move.set_id, move.assignment)
    mover = state.current_player
    move = players[mover].act(state.view(mover, force_call=force_call))
    if isinstance(move, AskMove):
        return state.ask(move.target, move.card)
    return state.call(mover, move.set_id, move.assignment)


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion (draws count as half a win)."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def run_match(names: list[str], num_players: int, games: int, seed: int = 0,
              params_kwargs: dict | None = None, player_kwargs: dict | None = None,
              max_moves: int = 1000, progress=None) -> dict:
    """`games` deals, each played twice (names[0]'s kind as team 0, then as team 1). Returns
    wins / draws / losses of names[0], its win rate (draws half) with a 95% Wilson interval,
    mean sets, mean moves, and how many games hit the move cap."""
    if len(names) != 2:
        raise ValueError(f"a Fish match needs exactly two players, got {list(names)}")
    params = Params(num_players=num_players, **(params_kwargs or {}))
    tally = {"wins": 0, "draws": 0, "losses": 0, "sets_for": 0, "sets_against": 0,
             "moves": 0, "capped": 0}
    started = time.perf_counter()
    for deal in range(games):
        for swap in (0, 1):
            kinds = [names[(seat + swap) % 2] for seat in range(num_players)]
            players = [make_fish_player(kind, seed=seed * 1_000_003 + deal * 2 + swap,
                                        **(player_kwargs or {}).get(kind, {}))
                       for kind in kinds]
            result = play_game(params, players, seed=seed * 1_000_003 + deal,
                               first_player=deal % num_players, max_moves=max_moves)
            mine = swap  # team index that names[0] played
            s_mine, s_theirs = result["score"][mine], result["score"][1 - mine]
            tally["wins" if s_mine > s_theirs else "losses" if s_mine < s_theirs else "draws"] += 1
            tally["sets_for"] += s_mine
            tally["sets_against"] += s_theirs
            tally["moves"] += result["moves"]
            tally["capped"] += int(result["capped"])
            if progress:
                progress(1)
    n = 2 * games
    score = tally["wins"] + 0.5 * tally["draws"]
    low, high = wilson(score, n)
    return {"players": list(names), "num_players": num_players, "games": n,
            "wins": tally["wins"], "draws": tally["draws"], "losses": tally["losses"],
            "win_rate": score / n, "ci95": [low, high],
            "mean_sets": [tally["sets_for"] / n, tally["sets_against"] / n],
            "mean_moves": tally["moves"] / n, "capped_games": tally["capped"],
            "seconds": time.perf_counter() - started}
