"""The learned Fish player (fish/players/learned.py) and its trainer (fish/learning/,
`train.py game=fish`).

Invariants: the learned player only makes legal moves at 6 and 8 players, in matches (forced
calls included) and in the trainer's self-play (with helping); it never repeats an ask that
failed in the same information state, even when its scorer (or its belief) would prefer it;
when every ask is a certain miss it calls only if the call is right with probability >=
CALL_THRESHOLD, else hands the turn over with a miss that never failed, and calls when none is
left; a call's named allocation has a probability no larger than any named card's marginal and
equal to it when one card is unsure; the scorer is shared, so relabelling the sets, the cards
within a set and the seats within each team permutes the candidates and leaves each one's score;
a few updates on a batch lower its loss; `train.py game=fish` writes its checkpoint, model,
logs and tensorboard events, a run split in two and resumed ends with exactly the weights of an
uninterrupted one, an existing run is refused and left as it was, a mismatched resume is
refused; `evaluate.py game=fish mode=match players=[learned,logic] checkpoint=PATH` plays that
model and a missing model file is one clean error.

Speed: everything runs in-process (scrofazero.entry.train / entry.evaluate with the config hydra
composes), so the belief tracker's numba code compiles once (most of the time here).
"""

import json

import numpy as np
import pytest
import torch
from composed import config, refused
from fish_games import Checked, deal_with

from scrofazero import entry
from scrofazero.fish.learning.selfplay import Tally, batch_loss, play_training_game, update
from scrofazero.fish.match import play_game
from scrofazero.fish.players.learned import FishMind, LearnedPlayer
from scrofazero.fish.players.logic import RandomPlayer
from scrofazero.fish.players.roster import make_fish_player
from scrofazero.fish.players.scorer import FEATURES, Scorer, load_scorer, model_payload
from scrofazero.games.fish.cards import card_id, num_sets, set_cards, set_of, teammates
from scrofazero.games.fish.rules import AskMove, CallMove, FishState, Params

META = {"train_sizes": [6], "calls": "any_time", "ask_held_allowed": False, "opponent": "self",
        "seed": 0, "max_moves": 1000, "gamma": 0.98, "hit_reward": 0.1, "win_reward": 1.0,
        "call_checks": "mover", "value_weight": 0.5, "entropy_weight": 0.01}


def random_scorer(seed: int = 0) -> Scorer:
    """A scorer whose MLP matters (the fresh one's head is zero)."""
    torch.manual_seed(seed)
    net = Scorer()
    torch.nn.init.normal_(net.head.weight, std=1.0)
    net.eval()
    return net


@pytest.mark.parametrize("num_players,seeds", [(6, [0]), (8, [2])])
def test_moves_are_legal_in_matches(num_players, seeds):
    net = random_scorer(num_players)
    for seed in seeds:
        players = [Checked(LearnedPlayer(model=net, greedy=False, seed=seed * 10 + s))
                   if s % 2 == 0 else make_fish_player("logic") for s in range(num_players)]
        # past 30 moves the player to move must call: the forced calls are played too
        result = play_game(Params(num_players=num_players), players, seed=seed,
                           first_player=seed % num_players, max_moves=30)
        assert sum(result["score"]) == (9 if num_players == 6 else 8) and result["capped"]
        assert sum(p.moves for p in players if isinstance(p, Checked)) > 10


def test_self_play_games_are_legal_with_helping():
    # the trainer's own loop (its moves go through the rules engine, which refuses any
    # illegal one), every seat the learner, helping on half the moves, at both sizes
    tally = Tally()
    for index, size in enumerate([6, 8]):
        decisions = play_training_game(random_scorer(), {**META, "train_sizes": [size]}, index,
                                       0.5, tally)
        assert decisions and all(0 <= d["a"] < len(d["x"]) for d in decisions)
        assert all(d["x"].shape[1] == len(FEATURES) for d in decisions)
    assert tally.helped > 0 and tally.asks > 0


class _PreferSuccess:
    """A stand-in scorer: the likeliest move by the (patched) belief, nothing else."""

    def scores(self, rows):
        return 100.0 * rows[:, 0]


def test_never_repeats_a_failed_ask():
    # seat 0 asks seat 1 for D4 and misses; seat 1 misses back; seat 0 may legally ask seat 1
    # for D4 again, and nothing has moved D4 since
    state = FishState.new(Params(num_players=6), deal_with(
        {"D2": 0, "D3": 0, "D4": 3, "C2": 1, "C3": 5}), first_player=0)
    player = LearnedPlayer(model=_PreferSuccess())
    player.reset(6, 0, state.hand(0))
    for ask in ((1, card_id("D4")), (0, card_id("C3"))):
        event = state.ask(*ask)
        assert not event.success
        player.observe(event)
    repeat = AskMove(1, card_id("D4"))
    view = state.view(0)
    assert (repeat.target, repeat.card) in view.legal_asks
    moves, _, kind = player.mind.candidates(view)
    assert kind == "ask" and repeat not in moves
    # a belief that (wrongly) puts D4 with seat 1 for certain, and a scorer that follows it:
    # the hard rule still masks the repeat
    probs = player.mind.belief.probabilities().copy()
    probs[:, card_id("D4")] = 0.0
    probs[1, card_id("D4")] = 1.0
    player.mind.belief.probabilities = lambda: probs
    assert player.act(view) != repeat
    player.mind.failed.clear()  # without the rule, the same player would repeat the ask
    assert player.act(view) == repeat


@pytest.mark.parametrize("p_right", [0.95, 0.6])
def test_every_ask_a_certain_miss_calls_if_sure_else_passes(p_right, monkeypatch):
    # a belief in which the team holds every set the mover asks in, its allocation unsure
    state = FishState.deal(Params(num_players=6), 4)
    seat = state.current_player
    player = LearnedPlayer(model=_PreferSuccess())
    player.reset(6, seat, state.hand(seat))
    mine = {set_of(c) for c in state.hand(seat)}
    mates = [s for s in teammates(seat, 6) if s != seat]
    probs = np.zeros((6, 54))
    for card in range(54):
        if card in state.hand(seat):
            probs[seat, card] = 1.0
        elif set_of(card) in mine:  # with a teammate, which one unknown
            probs[mates, card] = 0.5
        else:
            probs[[s for s in range(6) if s % 2 != seat % 2], card] = 1 / 3
    mind = player.mind
    monkeypatch.setattr(mind.belief, "probabilities", lambda: probs)
    monkeypatch.setattr(mind, "best_allocation", lambda k: (
        CallMove(k, tuple((c, seat) for c in set_cards(k))), p_right))
    view = state.view(seat)
    moves, _, kind = mind.candidates(view)
    if p_right >= 0.9:  # learned.CALL_THRESHOLD
        assert kind == "call_team_set" and {m.set_id for m in moves} == mine
        assert isinstance(player.act(view), CallMove)
        return
    # unsure: hand the turn over with a certain miss, never one that failed before
    failed = view.legal_asks[0]
    mind.failed.add(failed)
    moves, _, kind = mind.candidates(view)
    assert kind == "pass" and AskMove(*failed) not in moves
    assert len(moves) == len(view.legal_asks) - 1
    move = player.act(view)
    assert isinstance(move, AskMove) and move != AskMove(*failed)
    mind.failed.update(view.legal_asks)  # every miss already failed: it calls after all
    _, _, kind = mind.candidates(view)
    assert kind == "call_team_set" and isinstance(player.act(view), CallMove)


def test_best_allocation_probabilities():
    # after 80 random asks (seeded: one seat then has a set its team holds with one card's
    # holder unsure): for every uncalled set, the named allocation's probability is at most
    # each named card's marginal, is 1 when the per-card likeliest allocation is certain, and
    # equals the unsure card's likeliest marginal when only one card is unsure
    state = FishState.deal(Params(num_players=6), 11)
    rng = np.random.default_rng(0)
    minds = [FishMind(6, s, state.hand(s)) for s in range(6)]
    for _ in range(80):
        asks = state.legal_asks()
        event = state.ask(*asks[int(rng.integers(len(asks)))])
        for mind in minds:
            mind.observe(event)
    exact = 0
    for mind in minds:
        probs = mind.belief.probabilities()
        team = list(teammates(mind.seat, 6))
        for k in state.uncalled_sets():
            cards = list(set_cards(k))
            likeliest = probs[team][:, cards].max(axis=0)
            one_unsure = (likeliest >= 1.0 - 1e-9).sum() == 5 and likeliest.min() > 0
            if mind.seat > 1 and not one_unsure:
                continue
            move, p = mind.best_allocation(k)
            assert sorted(c for c, _ in move.assignment) == cards
            assert p <= min(probs[s, c] for c, s in move.assignment) + 1e-9
            if likeliest.min() >= 1.0 - 1e-9:
                assert p == 1.0
            if one_unsure:
                assert p == pytest.approx(likeliest.min(), abs=1e-9)
                exact += 1
    assert exact > 0


def _relabelled(num_players: int, seed: int):
    """A position after some random asks, and the same position with the sets, the cards within
    each set and the seats within each team permuted; (state, state2, card map, seat map)."""
    rng = np.random.default_rng(seed)
    params = Params(num_players=num_players)
    state = FishState.deal(params, rng)
    for _ in range(14):  # random asks that empty no hand (turn passing is by seat number)
        asks = [(t, c) for t, c in state.legal_asks()
                if state.holder(c) != t or state.hand_counts[t] > 1]
        state.ask(*asks[int(rng.integers(len(asks)))])
    sets = num_sets(num_players)
    sigma = rng.permutation(sets)
    tau = [rng.permutation(6) for _ in range(sets)]
    card_map = {c: int(sigma[set_of(c)] * 6 + tau[set_of(c)][c % 6])
                for c in range(sets * 6)}
    seat_map = {}
    for team in (0, 1):
        seats = list(range(team, num_players, 2))
        for s, t in zip(seats, rng.permutation(seats)):
            seat_map[s] = int(t)
    hands = [None] * num_players
    for s, hand in enumerate(state.initial_hands):
        hands[seat_map[s]] = [card_map[c] for c in hand]
    state2 = FishState.new(params, hands, first_player=seat_map[state.first_player])
    for e in state.events:
        state2.ask(seat_map[e.target], card_map[e.card], asker=seat_map[e.asker])
    return state, state2, card_map, seat_map


@pytest.mark.parametrize("num_players,seed", [(6, 3), (8, 5)])
def test_scores_are_equivariant_under_relabelling(num_players, seed):
    net = random_scorer(1)
    state, state2, card_map, seat_map = _relabelled(num_players, seed)
    seat = state.current_player
    assert state2.current_player == seat_map[seat]
    scored = []
    for s, st in ((seat, state), (seat_map[seat], state2)):
        mind = FishMind(num_players, s, st.initial_hands[s])
        for event in st.events:
            mind.observe(event)
        moves, rows, kind = mind.candidates(st.view(s))
        assert kind == "ask" and len(moves) > 3
        scored.append(dict(zip(moves, net.scores(rows))))
    mapped = {AskMove(seat_map[m.target], card_map[m.card]): v for m, v in scored[0].items()}
    assert mapped.keys() == scored[1].keys()
    for move, value in mapped.items():
        assert value == pytest.approx(scored[1][move], abs=1e-4)
    assert len({round(float(v), 3) for v in mapped.values()}) > 1  # not a constant scorer


def test_updates_lower_the_loss():
    net = Scorer()
    torch.manual_seed(0)
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
    batch = play_training_game(net, META, 7, 0.0, Tally())
    assert len(batch) > 20 and {"x", "a", "G"} <= batch[0].keys()
    before = batch_loss(net, batch, META)["loss"].item()
    for _ in range(15):
        update(net, optimizer, batch, META)
    after = batch_loss(net, batch, META)["loss"].item()
    assert after < before - 0.1


# ---- train.py and evaluate.py


def _weights(path):
    return torch.load(path, weights_only=True)["model"]


def test_train_resume_refuse_and_evaluate(tmp_path, capsys, monkeypatch):
    common = ("game=fish", "game.selfplay.train_sizes=[6]", "game.selfplay.games_per_update=1",
              "game.match.max_moves=40", "game.selfplay.helping=[0.5,0.0]",
              f"checkpoint_dir={tmp_path / 'ck'}", f"log_dir={tmp_path / 'runs'}")
    no_eval = "game.selfplay.eval_every=0"
    # a smoke run with an evaluation against logic at its end
    entry.train(config("train", *common, "run=whole", "game.selfplay.updates=2",
                       "game.selfplay.eval_every=2", "game.selfplay.eval_games=1",
                       "game.match.table_sizes=[6]"))
    run = tmp_path / "ck" / "whole"
    assert {"latest.pt", "model.pt", "train.jsonl", "eval.jsonl"} <= {p.name for p in
                                                                       run.iterdir()}
    lines = [json.loads(x) for x in (run / "train.jsonl").read_text().splitlines()]
    assert [x["update"] for x in lines] == [1, 2] and lines[0]["helping"] == 0.5
    assert lines[1]["helping"] == 0.0 and lines[0]["helped_moves"] > 0
    evals = [json.loads(x) for x in (run / "eval.jsonl").read_text().splitlines()]
    assert evals[0]["update"] == 2 and evals[0]["tables"]["6"]["wins"] + \
        evals[0]["tables"]["6"]["draws"] + evals[0]["tables"]["6"]["losses"] == 2
    assert list((tmp_path / "runs" / "whole").glob("events.out.tfevents.*"))
    assert isinstance(load_scorer(run / "model.pt"), Scorer)
    # the same run in two halves, the second resumed: the same weights at the end
    entry.train(config("train", *common, "run=split", "game.selfplay.updates=1", no_eval))
    half = _weights(tmp_path / "ck" / "split" / "latest.pt")
    entry.train(config("train", *common, "run=split", "game.selfplay.updates=2", no_eval,
                       "resume=true"))
    whole, split = _weights(run / "latest.pt"), _weights(tmp_path / "ck" / "split" / "latest.pt")
    assert all(torch.equal(whole[k], split[k]) for k in whole)
    assert not all(torch.equal(half[k], split[k]) for k in half)  # the second half trained
    # an existing run is refused and left as it was; so is resuming with other settings
    before = (run / "latest.pt").read_bytes()
    err = refused(entry.train, config("train", *common, "run=whole", "game.selfplay.updates=2"),
                  capsys, monkeypatch)
    assert "exists" in err and (run / "latest.pt").read_bytes() == before
    err = refused(entry.train, config("train", *common, "run=whole", "game.selfplay.updates=3",
                                      "game.selfplay.lr=0.5", "resume=true"), capsys, monkeypatch)
    assert "different run" in err and (run / "latest.pt").read_bytes() == before
    # evaluate.py plays the trained model (the checkpoint option reaches the player)
    out = tmp_path / "match.json"
    entry.evaluate(config("evaluate", "game=fish", "mode=match", "players=[learned,logic]",
                          f"checkpoint={run / 'model.pt'}", "game.match.games=1",
                          "game.match.max_moves=40", "game.match.table_sizes=[6]", f"out={out}"))
    result = json.loads(out.read_text())
    table = result["tables"]["6"]
    assert table["games"] == 2 and result["settings"]["checkpoint"] == str(run / "model.pt")
    assert table["learned_calls"]["calls"] >= table["learned_calls"]["right"] > 0
    err = refused(entry.evaluate, config("evaluate", "game=fish", "mode=match",
                                         "players=[learned,logic]",
                                         f"checkpoint={tmp_path / 'none.pt'}", "game.match.games=1",
                                         "game.match.table_sizes=[6]"), capsys, monkeypatch)
    assert "none.pt" in err


def test_init_from_starts_from_the_file_with_a_fresh_optimiser(tmp_path, capsys, monkeypatch):
    common = ("game=fish", "game.selfplay.train_sizes=[6]", "game.selfplay.games_per_update=1",
              "game.match.max_moves=40", "game.selfplay.eval_every=0",
              f"checkpoint_dir={tmp_path / 'ck'}", f"log_dir={tmp_path / 'runs'}")
    source = random_scorer(3)
    torch.save(model_payload(source), tmp_path / "start.pt")
    entry.train(config("train", *common, "run=warm", "game.selfplay.updates=1",
                       f"game.selfplay.init_from={tmp_path / 'start.pt'}"))
    trained = load_scorer(tmp_path / "ck" / "warm" / "model.pt").state_dict()
    entry.train(config("train", *common, "run=cold", "game.selfplay.updates=1"))
    cold = load_scorer(tmp_path / "ck" / "cold" / "model.pt").state_dict()
    start = source.state_dict()
    # one small Adam step from the file's weights: near them, far from a fresh network's
    near = max(float((trained[k] - start[k]).abs().max()) for k in start)
    assert 0 < near < 0.05 and not torch.equal(trained["head.weight"], cold["head.weight"])
    payload = torch.load(tmp_path / "ck" / "warm" / "latest.pt", weights_only=False)
    assert payload["trainer"]["optimizer"]["state"][0]["step"] == 1  # fresh Adam: one step
    assert "init_from" in json.loads(payload["trainer"]["meta"])
    entry.train(config("train", *common, "run=warm", "game.selfplay.updates=2", "resume=true",
                       f"game.selfplay.init_from={tmp_path / 'start.pt'}"))
    err = refused(entry.train, config("train", *common, "run=bad", "game.selfplay.updates=1",
                                      "game.selfplay.hidden=8",
                                      f"game.selfplay.init_from={tmp_path / 'start.pt'}"),
                  capsys, monkeypatch)
    assert "game.selfplay.init_from" in err and "start.pt" in err


def test_bad_model_files_are_refused(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a model")
    with pytest.raises(ValueError, match="bad.pt"):
        load_scorer(bad)
    torch.save({"format": "something else"}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="other.pt"):
        load_scorer(tmp_path / "other.pt")
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        load_scorer(tmp_path / "missing.pt")


def test_registry_builds_the_learned_player():
    assert isinstance(make_fish_player("learned", model=Scorer()), LearnedPlayer)
    assert isinstance(make_fish_player("random"), RandomPlayer)
