"""The duplicate arena: single games, duplicate matches and the player matrix.

Invariants covered: play_game returns team differences and rejects illegal moves and bad input;
the rotated play puts the same hand in the leader's seat; a deterministic player against itself
scores exactly 0 on every deal; a deal's value is the mean of its two plays computed by hand with
the documented rng keys; workers=1 and workers=2 agree; seeds reproduce and matter; the stderr
formula; matrix antisymmetry and JSON shape; Mr. If beats Mr. Random clearly. With workers >= 2 a
player that cannot be built fails at once with its own error, and a worker process that dies
mid-match (os._exit, SIGKILL) fails the whole match promptly instead of hanging or restarting;
an error in one worker ends the match without waiting for the busy others.
"""

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from bounded_run import run_bounded

from scrofazero.agents import make_agent
from scrofazero.eval.arena import (
    deal_value,
    duplicate_match,
    format_matrix,
    matrix,
    play_game,
)
from scrofazero.games.gongzhu.deals import hands_of, random_deal, rotate_deal
from scrofazero.games.gongzhu.rules import GongzhuState

ROOT = Path(__file__).resolve().parents[2]
HELPERS = ROOT / "tests" / "helpers"


class Lowest:
    name = "lowest"

    def act(self, view, rng):
        return view.legal_actions()[0]


class Highest:
    name = "highest"

    def act(self, view, rng):
        return view.legal_actions()[-1]


class Recorder:
    """Lowest legal card, remembering every (seat, hand) it was asked about."""

    name = "recorder"

    def __init__(self):
        self.calls = []

    def act(self, view, rng):
        self.calls.append((view.seat, view.hand))
        return view.legal_actions()[0]


class Cheat:
    name = "cheat"

    def act(self, view, rng):
        return next(c for c in range(52) if not view.hand >> c & 1)  # a card it does not hold


def deals(n, seed=0):
    return np.stack([random_deal(seed * 1000 + i) for i in range(n)])  # [n, 52]


def test_play_game_returns_team_differences():
    agents = [Lowest(), Highest(), Lowest(), Highest()]
    for seed in range(5):
        out = play_game(random_deal(seed), 2, agents, 5)
        state = GongzhuState(random_deal(seed), leader=2)
        while not state.is_terminal():
            state.apply(agents[state.current_player].act(state.view(state.current_player), None))
        assert out == state.returns()
        assert out[0] == out[2] == -out[1] == -out[3]


def test_play_game_rejects_illegal_moves_and_bad_input():
    with pytest.raises(ValueError, match="cheat"):
        play_game(random_deal(1), 0, [Cheat(), Lowest(), Lowest(), Lowest()], 0)
    with pytest.raises(ValueError, match="4 agents"):
        play_game(random_deal(1), 0, [Lowest()] * 3, 0)
    with pytest.raises(ValueError, match="leader"):
        play_game(random_deal(1), 4, [Lowest()] * 4, 0)


def test_rotated_play_puts_the_same_hand_in_the_leaders_seat():
    deal = random_deal(3)
    rotated = rotate_deal(deal, 1)
    assert hands_of(rotated)[1] == hands_of(deal)[0]
    first, second = Recorder(), Recorder()
    play_game(deal, 0, [first] * 4, 0)
    play_game(rotated, 1, [second] * 4, 0)
    assert first.calls[0] == (0, hands_of(deal)[0])
    assert second.calls[0] == (1, hands_of(deal)[0])


@pytest.mark.parametrize("agent", [Lowest(), Highest()])
def test_deterministic_player_against_itself_scores_zero(agent):
    # The rotated play mirrors the first with the teams swapped, so the two plays cancel.
    for i, deal in enumerate(deals(12)):
        assert deal_value(deal, [agent] * 4, seed=0, deal_index=i) == 0.0
    assert any(play_game(d, 0, [agent] * 4, 0)[0] != 0 for d in deals(12))  # not trivially 0


def test_deal_value_is_the_mean_of_the_two_plays():
    agents = [Highest(), Lowest(), Highest(), Lowest()]
    for deal in deals(6, seed=1):
        first = play_game(deal, 0, agents, 0)[0]
        second = play_game(rotate_deal(deal, 1), 1, agents, 0)[0]
        assert deal_value(deal, agents, seed=9, deal_index=0) == (first + second) / 2


def test_match_uses_the_documented_decision_rngs():
    # Random players: every value must be reproducible from SeedSequence([seed, deal, play, seat]).
    d = deals(5, seed=2)
    res = duplicate_match("if", "random", d, seed=11, progress=False)
    agents = [make_agent("if"), make_agent("random")] * 2
    for i, deal in enumerate(d):
        plays = []
        for play, (dl, leader) in enumerate([(deal, 0), (rotate_deal(deal, 1), 1)]):
            rngs = [
                np.random.default_rng(np.random.SeedSequence([11, i, play, s])) for s in range(4)
            ]
            plays.append(play_game(dl, leader, agents, rngs)[0])
        assert res.values[i] == sum(plays) / 2


def test_workers_do_not_change_results():
    d = deals(24, seed=3)
    one = duplicate_match("random", "if", d, seed=5, workers=1, progress=False)
    two = duplicate_match("random", "if", d, seed=5, workers=2, progress=False)
    np.testing.assert_array_equal(one.values, two.values)
    # chunks of one deal, finishing in any order, still come back in deal order
    three = duplicate_match("random", "if", d[:7], seed=5, workers=3, progress=False)
    np.testing.assert_array_equal(one.values[:7], three.values)


def test_seed_reproduces_and_matters():
    d = deals(16, seed=4)
    a = duplicate_match("random", "random", d, seed=1, progress=False)
    b = duplicate_match("random", "random", d, seed=1, progress=False)
    c = duplicate_match("random", "random", d, seed=2, progress=False)
    np.testing.assert_array_equal(a.values, b.values)
    assert not np.array_equal(a.values, c.values)


def test_result_statistics():
    d = deals(10, seed=5)
    res = duplicate_match("random", "if", d, seed=0, progress=False)
    assert res.deals == 10 and res.values.shape == (10,)
    assert res.mean == pytest.approx(sum(res.values) / 10)
    dev = sum((v - res.mean) ** 2 for v in res.values) / 9
    assert res.stderr == pytest.approx(math.sqrt(dev) / math.sqrt(10))


def test_match_rejects_bad_input():
    with pytest.raises(ValueError, match="shape"):
        duplicate_match("if", "random", np.zeros((3, 51), dtype=int), seed=0, progress=False)
    bad = deals(1).copy()
    bad[0, 0] = bad[0, 1]
    with pytest.raises(ValueError, match="repeated"):
        duplicate_match("if", "random", bad, seed=0, progress=False)
    with pytest.raises(ValueError, match="agent_kwargs"):
        duplicate_match("if", "random", deals(1), 0, progress=False, agent_kwargs={"x": {}})
    with pytest.raises(ValueError, match="workers"):
        duplicate_match("if", "random", deals(1), 0, workers=0, progress=False)
    with pytest.raises(ValueError, match="unknown player"):
        duplicate_match("nobody", "random", deals(1), 0, progress=False)


def test_matrix_is_antisymmetric_and_json_ready():
    d = deals(8, seed=6)
    res = matrix(["random", "if"], d, seed=3, workers=1, progress=False)
    assert json.loads(json.dumps(res)) == res
    assert set(res) == {"players", "margin", "stderr", "deals"}
    assert res["players"] == ["random", "if"] and res["deals"] == 8
    m, s = np.array(res["margin"]), np.array(res["stderr"])
    assert m.shape == s.shape == (2, 2)
    np.testing.assert_array_equal(m, -m.T)
    np.testing.assert_array_equal(s, s.T)
    assert m[0, 0] == m[1, 1] == 0
    direct = duplicate_match("if", "random", d, seed=3, progress=False)
    assert m[0, 1] == direct.mean and s[0, 1] == direct.stderr
    table = format_matrix(res)
    assert f"{direct.mean:.1f} ({direct.stderr:.1f})" in table
    assert f"{-direct.mean:.1f} ({direct.stderr:.1f})" in table


def test_mr_if_beats_mr_random():
    res = duplicate_match("if", "random", deals(64, seed=7), seed=0, progress=False)
    assert res.mean > 50  # published margin: 194 (4) over 1024 deals


def run_match_script(body: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `body` (Python with `deals` and `duplicate_match` at hand) in a fresh interpreter.

    A separate process, so that a hanging pool fails this test by its timeout (TimeoutExpired)
    instead of hanging the test run (the bound is generous: a loaded 2-core machine takes over
    half a minute for what a quiet one does in ten seconds; a hang never ends), and so that the
    spawned workers can import tests/helpers.
    The script prints `raised <type>: <message>` for an exception and exits 0.
    """
    head = textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(HELPERS)!r})
        import numpy as np
        from scrofazero.eval.arena import duplicate_match
        from scrofazero.games.gongzhu.deals import random_deal
        deals = np.stack([random_deal(i) for i in range(8)])
        try:
    """)
    tail = textwrap.dedent("""\
        except BaseException as err:
            print(f"raised {type(err).__name__}: {err}")
    """)
    code = head + textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", "    ") + tail
    return run_bounded([sys.executable, "-c", code], timeout, cwd=ROOT)


def test_unbuildable_player_fails_at_once_with_two_workers():
    # multiprocessing.Pool restarted a failing initializer without end: this hung forever.
    proc = run_match_script("""
        duplicate_match("greed", "random", deals, seed=0, workers=2, progress=False,
                        agent_kwargs={"greed": {"num_samples": 0}})
    """)
    assert proc.returncode == 0, proc.stderr
    assert ("raised ValueError: greed.num_samples=0: must be greater than or equal to 1"
            in proc.stdout)
    # built once in the parent, so no worker printed its own traceback
    assert "Traceback" not in proc.stderr and "initializer" not in proc.stderr


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_worker_death_fails_the_match_promptly(how):
    proc = run_match_script(f"""
        from dying_net import DyingNet
        duplicate_match("raw", "random", deals, seed=0, workers=2, progress=False,
                        agent_kwargs={{"raw": {{"model": DyingNet({how!r})}}}})
        print("finished")
    """)
    assert proc.returncode == 0, proc.stderr
    assert "finished" not in proc.stdout
    assert "raised BrokenProcessPool: " in proc.stdout and "worker process died" in proc.stdout
    assert "raw vs random" in proc.stdout


def test_worker_error_propagates_with_its_own_message():
    # An ordinary exception in a worker (an unreadable file only the worker sees, say) comes
    # back to the parent as itself; the match does not go on playing the other chunks.
    proc = run_match_script("""
        import pathlib, tempfile
        from scrofazero.eval import arena
        from scrofazero.nn.checkpoint import save_checkpoint
        from scrofazero.nn.network import PolicyValueNet
        folder = pathlib.Path(tempfile.mkdtemp())
        save_checkpoint(folder, model=PolicyValueNet(hidden=(8,), num_blocks=1),
                        optimizer=None, step=1, config={})
        ckpt = folder / "latest.pt"
        build = arena._build_agents
        def build_then_truncate(*args):
            agents = build(*args)
            ckpt.write_bytes(b"")  # the workers, which build after the parent, see an empty file
            return agents
        arena._build_agents = build_then_truncate
        duplicate_match("raw", "random", deals, seed=0, workers=2, progress=False,
                        agent_kwargs={"raw": {"checkpoint": str(ckpt)}})
    """)
    assert proc.returncode == 0, proc.stderr
    assert "raised CheckpointError: " in proc.stdout and "latest.pt" in proc.stdout


def test_worker_error_stops_the_busy_workers(tmp_path):
    # One worker's error ends the match at once: the other workers, stuck in long chunks, are
    # stopped rather than waited for.
    marker = tmp_path / "first_call"
    proc = run_match_script(f"""
        from dying_net import FirstCallFails
        duplicate_match("raw", "random", deals, seed=0, workers=2, progress=False,
                        agent_kwargs={{"raw": {{"model": FirstCallFails({str(marker)!r})}}}})
    """)
    assert proc.returncode == 0, proc.stderr
    assert "raised ValueError: first call fails" in proc.stdout
    assert marker.exists()  # waiting for the others (an hour's sleep) would pass the bound
