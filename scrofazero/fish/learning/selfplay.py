"""Self-play games of the learned Fish player and its REINFORCE update (fish/learning/train.py runs
them under the run harness).

Every seat is the learner (`game.selfplay.opponent=self`, default) or one team is the learner
and the other the logic player (`game.selfplay.opponent=logic`, alternating by game). Each
update plays `game.selfplay.games_per_update` games, alternating over
`game.selfplay.train_sizes`, and takes one Adam step on all of the learner's decisions (the asks
and the calls it chose; certain calls are a rule, not a decision): loss = -(G - V) log pi(move)
+ value_weight (V - G)^2 - entropy_weight H(pi), where the return G of a decision at move m is

    hit_reward x (+1 hit, -1 miss; asks only)
    + sum over the sets called at moves m' >= m of gamma^(m' - m) x (+1 to its team, -1 not)
    + win_reward x gamma^(end - m) x (+1 won, -1 lost, 0 draw)

and V the scorer's value read-out (the baseline). `game.selfplay.helping=[start,end]`: with a
probability going linearly from start to end over the run, the learner's move is replaced: its
team calls a set it holds entirely (with the true allocation) if there is one, else it asks a
legal ask that hits if there is one (recorded as its decision, as the seed's "helping" did);
calls so made are not counted in the call accuracy.

Speed: a seat's exact tracker is recounted only when that seat decides (fish/players/learned.py,
_LazyBelief). Calls of certain sets: `game.selfplay.call_checks=every_seat` asks every learner
seat between any two moves, as the match runner does, but only while its team really holds a
whole uncalled set (a certain set is always really held, so this skips only counts whose answer
is "no call": the games are the ones the `learned` player would play in a match); `mover`
(default) asks only the learner to move, on its turn: a set its team holds whole cannot be taken
by the opponents (an asker needs a card of the set), so only the moment of the call changes, and
each move costs one count instead of several (measured in models/fish_learned.md).
"""

from __future__ import annotations

import numpy as np
import torch

from scrofazero.fish.players.learned import FishMind, choose
from scrofazero.fish.players.logic import LogicPlayer
from scrofazero.fish.players.scorer import Scorer
from scrofazero.games.fish.cards import set_cards, team_of
from scrofazero.games.fish.events import Call
from scrofazero.games.fish.rules import AskMove, CallMove, FishState, Params


def helping_probability(helping: list[float], done: int, total: int) -> float:
    start, end = helping
    return float(start + (end - start) * done / max(total - 1, 1))


class Tally:
    def __init__(self):
        self.asks = self.hits = self.calls = self.right = self.helped = self.certain = 0

    def summary(self) -> dict:
        return {"hit_rate": self.hits / self.asks if self.asks else None,
                "call_accuracy": self.right / self.calls if self.calls else None,
                "learner_calls": self.calls, "helped_moves": self.helped,
                "sets_per_game_certain": self.certain}


def _team_holds_a_set(state: FishState, team: int) -> bool:
    holders = state.holders
    return any(all(holders[c] >= 0 and team_of(holders[c]) == team for c in set_cards(k))
               for k in state.uncalled_sets())


def _helped_move(state: FishState, view, rng: np.random.Generator):
    """A call of a set the mover's team holds entirely (true allocation), else a legal ask that
    hits, else None."""
    team = team_of(view.seat)
    for set_id in state.uncalled_sets():
        seats = [state.holder(c) for c in set_cards(set_id)]
        if all(team_of(s) == team for s in seats):
            return CallMove(set_id, tuple(zip(set_cards(set_id), seats)))
    hits = [(t, c) for t, c in view.legal_asks if state.holder(c) == t]
    if hits and not view.must_call:
        return AskMove(*hits[int(rng.integers(len(hits)))])
    return None


def play_training_game(net: Scorer, meta: dict, index: int, help_p: float,
                       tally: Tally) -> list[dict]:
    """Game `index` of the run (its deal, table size, first player and every draw seeded by
    (seed, index)); the learner's decisions with their returns: dicts x [K, F], a, G."""
    sizes = meta["train_sizes"]
    params = Params(num_players=sizes[index % len(sizes)], calls=meta["calls"],
                    ask_held_allowed=meta["ask_held_allowed"])
    n = params.num_players
    rng = np.random.default_rng([meta["seed"], index, 1])
    state = FishState.deal(params, np.random.default_rng([meta["seed"], index, 0]),
                           first_player=int(rng.integers(n)))
    learner_team = None if meta["opponent"] == "self" else index // len(sizes) % 2
    minds, others = {}, {}
    for seat in range(n):
        if learner_team is None or team_of(seat) == learner_team:
            minds[seat] = FishMind(n, seat, state.hand(seat), params.ask_held_allowed,
                                   params.ask_needs_other)
        else:
            others[seat] = LogicPlayer()
            others[seat].reset(n, seat, state.hand(seat), ask_held_allowed=params.ask_held_allowed,
                               ask_needs_other=params.ask_needs_other)
    decisions, set_events, moves = [], [], 0
    while not state.is_terminal:
        event = None
        if params.calls == "any_time":
            for seat in ((state.current_player + k) % n for k in range(n)):
                if seat in minds:
                    if meta["call_checks"] == "mover" or not _team_holds_a_set(state,
                                                                              team_of(seat)):
                        continue  # "mover": checked on its turn; else no set can be certain
                    move = minds[seat].certain_call(state.view(seat))
                else:
                    move = others[seat].call_now(state.view(seat))
                if move is not None:
                    event = state.call(seat, move.set_id, move.assignment)
                    if seat in minds:
                        tally.calls += 1
                        tally.right += int(event.correct)
                        tally.certain += 1
                    break
        if event is None:
            mover = state.current_player
            view = state.view(mover, force_call=moves >= meta["max_moves"])
            if mover in others:
                move = others[mover].act(view)
                event = _apply(state, mover, move)
            else:
                event, record = _learner_move(net, state, minds[mover], view, rng, help_p, tally)
                if record is not None:
                    record.update(team=team_of(mover), move=moves)
                    decisions.append(record)
        if isinstance(event, Call):
            set_events.append((moves, team_of(event.caller) if event.correct
                               else 1 - team_of(event.caller)))
        moves += 1
        for mind in minds.values():
            mind.observe(event)
        for other in others.values():
            other.observe(event)
    return _returns(decisions, set_events, state, moves, meta)


def _apply(state: FishState, mover: int, move):
    if isinstance(move, AskMove):
        return state.ask(move.target, move.card)
    return state.call(mover, move.set_id, move.assignment)


def _learner_move(net, state, mind: FishMind, view, rng, help_p: float, tally: Tally):
    """(event, decision record or None) for the learner to move."""
    certain = mind.certain_call(view) if _team_holds_a_set(state, team_of(view.seat)) else None
    if certain is not None:
        event = _apply(state, view.seat, certain)
        tally.calls += 1
        tally.right += int(event.correct)
        tally.certain += 1
        return event, None
    moves, rows, _ = mind.candidates(view)
    scores = net.scores(rows)
    index = choose(scores, rng)
    if help_p > 0 and rng.random() < help_p:
        helped = _helped_move(state, view, rng)
        if isinstance(helped, CallMove):
            tally.helped += 1
            return _apply(state, view.seat, helped), None
        if helped is not None and helped in moves:
            tally.helped += 1
            index = moves.index(helped)
    move = moves[index]
    event = _apply(state, view.seat, move)
    shaping = 0.0
    if isinstance(move, AskMove):
        tally.asks += 1
        tally.hits += int(event.success)
        shaping = 1.0 if event.success else -1.0
    else:
        tally.calls += 1
        tally.right += int(event.correct)
    return event, {"x": rows, "a": index, "shaping": shaping}


def _returns(decisions, set_events, state: FishState, end: int, meta: dict) -> list[dict]:
    if not decisions:
        return []
    gamma = meta["gamma"]
    at = np.array([d["move"] for d in decisions], dtype=float)
    team = np.array([d["team"] for d in decisions])
    g = meta["hit_reward"] * np.array([d["shaping"] for d in decisions])
    for move, winner in set_events:
        later = at <= move
        g += later * np.where(team == winner, 1.0, -1.0) * gamma ** (move - at)
    s = np.array(state.score, dtype=float)
    outcome = np.sign(s[team] - s[1 - team])
    g += meta["win_reward"] * outcome * gamma ** (end - at)
    return [{"x": d["x"], "a": d["a"], "G": float(v)} for d, v in zip(decisions, g)]


def batch_loss(net: Scorer, batch: list[dict], meta: dict) -> dict:
    """The loss of the module doc on `batch` (decisions x [K, F], a, G) as tensors: loss,
    policy_loss, value_loss, entropy."""
    k = max(len(d["x"]) for d in batch)
    x = np.zeros((len(batch), k, batch[0]["x"].shape[1]), dtype=np.float32)
    mask = np.zeros((len(batch), k), dtype=bool)
    for i, d in enumerate(batch):
        x[i, :len(d["x"])] = d["x"]
        mask[i, :len(d["x"])] = True
    x, mask = torch.from_numpy(x), torch.from_numpy(mask)
    a = torch.tensor([d["a"] for d in batch])
    ret = torch.tensor([d["G"] for d in batch], dtype=torch.float32)
    scores, value = net(x, mask)
    logp = torch.log_softmax(scores, dim=1)
    chosen = logp.gather(1, a[:, None]).squeeze(1)
    advantage = (ret - value).detach()
    policy_loss = -(advantage * chosen).mean()
    value_loss = ((value - ret) ** 2).mean()
    entropy = -(logp.exp() * logp.masked_fill(~mask, 0.0)).sum(1).mean()
    loss = policy_loss + meta["value_weight"] * value_loss - meta["entropy_weight"] * entropy
    return {"loss": loss, "policy_loss": policy_loss, "value_loss": value_loss,
            "entropy": entropy}


def update(net: Scorer, optimizer, batch: list[dict], meta: dict) -> dict:
    """One Adam step of REINFORCE with the value baseline on `batch` (see the module doc);
    the losses before the step, as floats."""
    if not batch:
        return {"loss": 0.0, "policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0}
    net.train()
    losses = batch_loss(net, batch, meta)
    optimizer.zero_grad()
    losses["loss"].backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    optimizer.step()
    net.eval()
    return {key: value.item() for key, value in losses.items()}
