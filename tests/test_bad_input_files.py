"""Damaged input files are named before any work; a byte order mark changes nothing; a Ray
address where something else listens is named within seconds.

Invariants: a Fish hand predictor file (model=PATH) that is empty, junk, truncated, of another
format, of the wrong shapes or with NaN weights is refused naming the file, and evaluate.py
refuses it before the tracker runs; a Tiny Crew policy.npz whose rows are not probability
distributions (NaN, negative, not summing to 1), of the wrong shape or with repeated keys is
refused naming the file, before the exact evaluation; deal files, Fish transcripts and Gongzhu
game records read the same with a UTF-8 byte order mark as without; cluster's probe passes an
HTTP/2 (gRPC) server and refuses a silent or HTTP/1 one at an open port.
"""

from __future__ import annotations

import dataclasses
import socket
import threading
import time

import numpy as np
import pytest
import torch
from composed import config, refused

from scrofazero import entry
from scrofazero.cluster import _check_reachable
from scrofazero.fish.prediction.network import (
    PredictorConfig,
    PredictorNet,
    load_predictor,
    save_predictor,
)
from scrofazero.games.fish.transcripts import parse_transcript, recording_paths
from scrofazero.games.gongzhu.deals import DEFAULT_DEALS_FILE, load_deals
from scrofazero.games.gongzhu.game_record import format_game, load_games
from scrofazero.tiny_crew.exact import TabularPolicy
from scrofazero.tiny_crew.policy_file import load_policy, save_policy

BOM = "\ufeff".encode()


@pytest.fixture
def predictor(tmp_path):
    path = tmp_path / "good.pt"
    save_predictor(path, PredictorNet(PredictorConfig()))
    return path


def _damaged(predictor, how: str):
    good = predictor.read_bytes()
    path = predictor.with_name(f"{how}.pt")
    payload = torch.load(predictor, weights_only=True)
    if how == "empty":
        path.write_bytes(b"")
    elif how == "junk":
        path.write_bytes(b"hello world junk\n" * 10)
    elif how == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif how == "other_format":
        torch.save({"format": "something else"}, path)
    elif how == "no_weights":
        torch.save({**payload, "state": [1, 2]}, path)
    elif how == "wrong_shapes":
        other = PredictorNet(PredictorConfig(hidden=8)).state_dict()
        torch.save({**payload, "state": other}, path)
    elif how == "huge_config":
        torch.save({**payload, "config": {**payload["config"], "hidden": 10**9}}, path)
    elif how == "nan_weights":
        state = dict(payload["state"])
        state["inp.weight"] = torch.full_like(state["inp.weight"], float("nan"))
        torch.save({**payload, "state": state}, path)
    return path


@pytest.mark.parametrize("how", ["empty", "junk", "truncated", "other_format", "no_weights",
                                 "wrong_shapes", "huge_config", "nan_weights"])
def test_a_damaged_predictor_is_named(predictor, how):
    assert load_predictor(predictor).cfg == PredictorConfig()
    path = _damaged(predictor, how)
    with pytest.raises(ValueError, match=f"^{path}: "):
        load_predictor(path)


def test_evaluate_refuses_a_damaged_predictor_before_the_tracker_runs(
        predictor, capsys, monkeypatch):
    def never(cfg):
        raise AssertionError("the tracker ran")

    monkeypatch.setitem(entry.GAMES, "fish", dataclasses.replace(entry.GAMES["fish"],
                                                                 evaluate=never))
    for how in ("truncated", "nan_weights"):
        path = _damaged(predictor, how)
        err = refused(entry.evaluate, config("evaluate", "game=fish", "mode=track",
                                             f"predictor={path}"), capsys, monkeypatch)
        assert err.startswith(f"error: {path}: ") and len(err.splitlines()) == 1
    missing = predictor.with_name("missing.pt")
    err = refused(entry.evaluate, config("evaluate", "game=fish", "mode=track",
                                         f"predictor={missing}"), capsys, monkeypatch)
    assert str(missing) in err


def _policy_file(tmp_path, name, keys, probs):
    path = tmp_path / name
    np.savez(path, keys=np.asarray(keys), probs=np.asarray(probs))
    return path


@pytest.mark.parametrize("name, keys, probs, message", [
    ("nan.npz", [5, 9], np.full((2, 12), np.nan), "row 0 .* is not a probability"),
    ("negative.npz", [5, 9], np.eye(12)[[3, 4]] * [[-1.0], [1.0]], "row 0 .* is not a probab"),
    ("sum.npz", [5, 9], np.eye(12)[[3, 4]] * 0.5, "row 0 .* is not a probability"),
    ("shape.npz", [5, 9], np.eye(12)[:, :11][:2], r"expected floats \(2, 12\)"),
    ("rows.npz", [5, 9, 11], np.eye(12)[[3, 4]], r"expected floats \(3, 12\)"),
    ("repeated.npz", [5, 5], np.eye(12)[[3, 4]], "keys repeat"),
    ("floatkeys.npz", [5.0, 9.0], np.eye(12)[[3, 4]], "keys must be integers"),
])
def test_a_policy_that_is_not_distributions_is_named(tmp_path, name, keys, probs, message):
    good = _policy_file(tmp_path, "good.npz", [5, 9], np.full((2, 12), 1 / 12, np.float32))
    assert len(load_policy(good)) == 2
    with pytest.raises(ValueError, match=f"^{tmp_path / name}: .*{message}"):
        load_policy(_policy_file(tmp_path, name, keys, probs))


def test_a_saved_policy_passes_and_a_bad_one_stops_evaluate_first(tmp_path, capsys, monkeypatch):
    policy = TabularPolicy()
    policy.set_rows([5, 9], np.full((2, 12), 1 / 12))
    save_policy(tmp_path / "p.npz", policy, {"method": "cfr"})
    assert np.allclose(load_policy(tmp_path / "p.npz").probs, 1 / 12)

    def never(cfg):
        raise AssertionError("the evaluation ran")

    monkeypatch.setitem(entry.GAMES, "tiny_crew",
                        dataclasses.replace(entry.GAMES["tiny_crew"], evaluate=never))
    bad = _policy_file(tmp_path, "nan.npz", [5], np.full((1, 12), np.nan))
    err = refused(entry.evaluate, config("evaluate", "game=tiny_crew",
                                         f"game.mccfr_policy={bad}"), capsys, monkeypatch)
    assert err.startswith(f"error: {bad}: probs row 0") and len(err.splitlines()) == 1


def test_a_byte_order_mark_changes_no_deal_file(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(BOM + DEFAULT_DEALS_FILE.read_bytes())
    assert np.array_equal(load_deals(path), load_deals())


def test_a_byte_order_mark_changes_no_transcript(tmp_path):
    source = recording_paths()[0]
    path = tmp_path / source.name
    path.write_bytes(BOM + source.read_bytes())
    plain, marked = parse_transcript(source), parse_transcript(path)
    assert marked.players == plain.players and marked.events == plain.events
    text = parse_transcript("\ufeff" + source.read_text(), path="x")
    assert text.players == plain.players and text.events == plain.events


def test_a_byte_order_mark_changes_no_game_record(tmp_path):
    text = format_game(load_deals(limit=1)[0], 0, [])
    (tmp_path / "plain.txt").write_text(text)
    (tmp_path / "bom.txt").write_bytes(BOM + text.encode())
    plain, marked = load_games(tmp_path / "plain.txt"), load_games(tmp_path / "bom.txt")
    assert [g.deal for g in marked] == [g.deal for g in plain] and len(plain) == 1


class _Server:
    """A TCP server on a free local port whose every connection gets `answer` (None: silence)."""

    def __init__(self, answer: bytes | None):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.answer, self.conns = answer, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            if self.answer is not None:
                conn.sendall(self.answer)

    def close(self):
        for conn in self.conns:
            conn.close()
        self.sock.close()


@pytest.mark.parametrize("answer, reason", [
    (None, "no HTTP/2 greeting within 0.5 s"),
    (b"HTTP/1.1 400 Bad Request\r\n\r\n", "not an HTTP/2 greeting"),
])
def test_a_port_that_is_not_ray_is_named_within_seconds(answer, reason):
    server = _Server(answer)
    try:
        started = time.perf_counter()
        with pytest.raises(ValueError, match=f"ray.address={server.address}: something listens "
                                             f"there but it is not a Ray cluster .*{reason}"):
            _check_reachable(server.address, timeout=0.5)
        assert time.perf_counter() - started < 3
        with pytest.raises(ValueError, match=f"ray.address=ray://{server.address}: something"):
            _check_reachable(f"ray://{server.address}", timeout=0.5)
    finally:
        server.close()


def test_an_http2_server_passes_the_probe():
    server = _Server(bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))  # an empty SETTINGS frame, as gRPC
    try:
        _check_reachable(server.address, timeout=2.0)
    finally:
        server.close()


def test_a_port_where_nothing_listens_is_named():
    with socket.create_server(("127.0.0.1", 0)) as sock:
        address = f"127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(ValueError, match=f"ray.address={address}: cannot reach a Ray cluster"):
        _check_reachable(address, timeout=0.5)
