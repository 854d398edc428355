"""`python review.py FILE`: a game file's seat reviewed by the full player, the same review as
scrofazero/eval/review.py gives, written as JSON; a bad source or setting is refused by name in
one `error:` line with exit code 2 (the house's convention); --help says whole sentences."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from composed import script

from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.games.gongzhu.game_record import format_game
from scrofazero.games.gongzhu.rules import GongzhuState

ROOT = Path(__file__).resolve().parents[1]
SMALL = str(ROOT / "models" / "scrofazero_small.pt")


def test_a_game_file_is_reviewed(tmp_path):
    deal = list(load_deals()[4])
    state, moves = GongzhuState(deal, leader=0), []
    for _ in range(8):
        moves.append(int(state.legal_actions()[0]))
        state.apply(moves[-1])
    (tmp_path / "game.txt").write_text(format_game(deal, 0, moves))
    run = subprocess.run([sys.executable, "review.py", str(tmp_path / "game.txt"), "--seat", "1",
                          "--checkpoint", SMALL, "--json", str(tmp_path / "r.json"),
                          "--worlds", "8"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    # the refusals and the help run review.py in this process (composed.script)
    assert run.returncode == 0, run.stderr
    out = json.loads((tmp_path / "r.json").read_text())
    review = out["reviews"][0]
    assert out["player"] == "scrofazero" and review["seat"] == 1 and len(review["moves"]) == 2
    assert review["settings"]["worlds"] == 8
    assert "trick  1, played second" in run.stdout and "was a mistake" in run.stdout
    for args, message in ((["nothing-here"], "'nothing-here' is neither a file nor a game number"),
                          ([str(tmp_path / "game.txt"), "--worlds", "1"], "review.worlds=1"),
                          ([str(tmp_path / "game.txt"), "--seat", "4"], "--seat must be 0..3")):
        bad = script("review.py", *args)
        assert bad.returncode == 2 and bad.stderr.startswith("error: ") and message in bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_the_help_says_whole_sentences():
    run = script("review.py", "--help")
    assert run.returncode == 0
    description = run.stdout.split("\n\n")[1]  # after the usage lines
    assert description.rstrip().endswith(".") and "expected final margin" in run.stdout
