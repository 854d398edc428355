"""What a newcomer meets first behaves: the commands refuse what they would silently ignore, and
say in one line what happened.

Invariants: a key no schema declares is refused with or without `+` (train.py, evaluate.py,
play.py), naming the key and the nearest one its group has, exit status 2; Ctrl-C stops
train.py in one line naming the last checkpoint and the command that continues it (or that
nothing was kept), and play.py in one line naming its records database, exit status 130, no
traceback; a file that is not a checkpoint is named in one
short line; evaluate.py refuses two modes and more deals than its deal file holds; each
command's --help lists the config groups it takes and no others; the defaults docs/commands.md
quotes are the configs'; the `cpu` preset (README's first command) has a length, which the
progress bar counts and README states, and README's CPU-torch note comes before that command.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from composed import ROOT, config, refused, script, settings_of
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from scrofazero import entry
from scrofazero.agents import player_names
from scrofazero.config import TrainConfig, check_declared, nearest
from scrofazero.games.gongzhu.deals import DEFAULT_DEALS_FILE
from scrofazero.nn.checkpoint import CheckpointError, load_checkpoint
from scrofazero.train.loop import progress_bar

JOBS = {"train": entry.train, "evaluate": entry.evaluate, "play": entry.play}


def _compose(name, *overrides):
    """configs/{name}.yaml composed as the script composes it (play.py has no `progress`)."""
    entry.register_configs()
    quiet = [] if name == "play" else ["progress=false"]
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        return compose(config_name=name, overrides=[*overrides, *quiet])


def _not_refused(cfg):
    raise AssertionError("the job ran: what it was given was not refused")


@pytest.mark.parametrize("name, overrides, message", [
    ("train", ["train.batch_size=abc"],
     "train.batch_size is not a setting; the nearest is train.games_per_batch"),
    ("train", ["train.warm_start.gamez=3"],
     "train.warm_start.gamez is not a setting; the nearest is train.warm_start.games"),
    ("train", ["foo=1"], "foo is not a setting"),
    ("train", ["game=fish", "model.hidden=[8]"],
     "model.hidden is not a setting of this run (model is train.py game=gongzhu's)"),
    ("train", ["game=fish", "game.selfplay.lrr=1"],
     "game.selfplay.lrr is not a setting; the nearest is game.selfplay.lr"),
    ("evaluate", ["deal=5"], "deal is not a setting; the nearest is deals"),
    ("evaluate", ["raw.sampling.num_deal=3"],
     "raw.sampling.num_deal is not a setting; the nearest is raw.sampling.num_deals"),
    ("play", ["prot=80"], "prot is not a setting; the nearest is port"),
])
@pytest.mark.parametrize("plus", ["", "+"])
def test_an_unknown_key_is_refused_with_or_without_plus(name, overrides, message, plus, capsys,
                                                        monkeypatch):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    # were it not refused, the job would fail the test at once instead of running
    monkeypatch.setattr(entry, "GAMES", {game: replace(row, train=_not_refused,
                                                       evaluate=_not_refused)
                                         for game, row in entry.GAMES.items()})
    monkeypatch.setattr("scrofazero.serve.app.serve", _not_refused)
    overrides = [*overrides[:-1], plus + overrides[-1]]
    with pytest.raises(SystemExit) as exit_:
        entry.run_script(lambda: JOBS[name](_compose(name, *overrides)))
    assert exit_.value.code == 2
    assert capsys.readouterr().err == f"error: {message} (debug=true shows the traceback)\n"


def test_a_registered_players_group_takes_any_key_the_schema_lacks():
    check_declared(config("evaluate", "+random.end=1"), free=player_names())
    with pytest.raises(ValueError, match="^greed.end is not a setting"):
        check_declared(config("evaluate", "+greed.end=1"), free=player_names())


def test_the_nearest_key_shares_a_word_or_is_similar():
    keys = [f.name for f in TrainConfig.__dataclass_fields__.values()]
    assert nearest("batch_size", keys) == "games_per_batch"
    assert nearest("eval_evry", keys) == "eval_every"
    assert nearest("lrr", keys) == "lr"
    assert nearest("zebra", keys) is None


def test_train_py_refuses_plus_an_unknown_key_before_any_work(tmp_path):
    proc = script("train.py", "experiment=smoke", "+train.batch_size=abc",
                  f"checkpoint_dir={tmp_path / 'ck'}", f"log_dir={tmp_path / 'runs'}")
    assert proc.returncode == 2 and proc.stderr.splitlines() == [
        "error: train.batch_size is not a setting; the nearest is train.games_per_batch "
        "(debug=true shows the traceback)"]
    assert not (tmp_path / "ck").exists()


def _as_from_a_terminal() -> None:
    """In the child before it runs Python: Ctrl-C's default meaning back. A pytest-xdist
    worker ignores SIGINT, and an ignored signal stays ignored across exec, so without this the
    command would never see the Ctrl-C the test sends."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_train(args: list[str], started: Path) -> subprocess.CompletedProcess:
    """`python train.py *args`, Ctrl-C'd (SIGINT to its process group, as a terminal sends it)
    once `started` exists."""
    proc = subprocess.Popen([sys.executable, "train.py", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=_as_from_a_terminal)
    try:
        deadline = time.time() + 300
        while not started.exists():
            assert proc.poll() is None, proc.stderr.read()[-3000:]
            assert time.time() < deadline, f"no {started}"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _smoke(tmp_path, *more):
    return ["experiment=smoke", "run=s", f"checkpoint_dir={tmp_path / 'ck'}",
            f"log_dir={tmp_path / 'runs'}", "train.eval_every=0", "train.max_batches=100000",
            *more]


def test_ctrl_c_in_train_names_the_last_checkpoint_and_the_resume_command(tmp_path):
    args = _smoke(tmp_path, "progress=false", "resume=false")
    run = tmp_path / "ck" / "s"
    proc = _interrupt_train(args, run / "ckpt_0000002.pt")  # step 1 is checkpointed by then
    assert proc.returncode == 130 and "Traceback" not in proc.stderr
    [line] = proc.stderr.splitlines()
    said, _, command = line.partition("; continue with: ")
    assert said == f"interrupted: the last checkpoint is {run / 'latest.pt'}"
    assert shlex.split(command) == ["python", "train.py", *args[:-1], "resume=true"]
    assert load_checkpoint(run / "latest.pt")["step"] >= 1  # 2 once its copies are made


def test_ctrl_c_before_the_first_checkpoint_says_nothing_was_kept(tmp_path):
    # the step-0 checkpoint exists, the next is 1000 batches away: the harness removes the folder
    args = _smoke(tmp_path, "train.checkpoint_every=1000")  # with the progress bar
    proc = _interrupt_train(args, tmp_path / "ck" / "s" / "latest.pt")
    assert proc.returncode == 130 and "Traceback" not in proc.stderr
    # besides the progress bar's renders (its refresh thread may draw once more after the line,
    # as a loaded machine showed), the one line
    said = [line for line in proc.stderr.splitlines() if line and not line.startswith("train s:")]
    assert said == ["interrupted before the run's first checkpoint: nothing was kept; the same "
                    "command starts it again"]
    assert not (tmp_path / "ck" / "s").exists()


def test_ctrl_c_in_play_says_where_the_records_are(tmp_path):
    db = tmp_path / "records.sqlite"
    proc = subprocess.Popen([sys.executable, "play.py", "port=0", f"db={db}"], cwd=ROOT,
                            text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=_as_from_a_terminal)
    try:
        url = re.search(r"http://\S+/", proc.stdout.readline())[0]
        deadline = time.time() + 60
        while True:  # serving: the signal reaches the running server, not its start
            try:
                urllib.request.urlopen(url, timeout=5).close()
                break
            except OSError:
                assert time.time() < deadline and proc.poll() is None, "the server never served"
                time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130 and err.splitlines() == [
        f"stopped: the records are kept in {db} (a game left unfinished is marked abandoned "
        "when the server starts again)"]
    assert entry.shown_database("postgresql://me:secret@host/games") == (
        "postgresql://me:***@host/games")


def test_a_file_that_is_not_a_checkpoint_is_named_in_one_short_line(tmp_path, capsys,
                                                                    monkeypatch):
    readme = ROOT / "README.md"
    with pytest.raises(CheckpointError) as err:
        load_checkpoint(readme)
    assert str(err.value) == f"{readme}: not a checkpoint (not a file torch.save writes)"
    torch.save({"a": SimpleNamespace()}, tmp_path / "objects.pt")  # refused by weights_only
    with pytest.raises(CheckpointError, match=r"objects.pt: not a checkpoint: it holds Python "
                                              r"objects besides tensors and data \(not loaded\)$"):
        load_checkpoint(tmp_path / "objects.pt")
    torch.save({"a": torch.zeros(100)}, tmp_path / "cut.pt")
    (tmp_path / "cut.pt").write_bytes((tmp_path / "cut.pt").read_bytes()[:300])
    with pytest.raises(CheckpointError, match=r"cut.pt: a damaged checkpoint \([^\n]{,120}\)$"):
        load_checkpoint(tmp_path / "cut.pt")
    cfg = config("evaluate", "mode=wpg", "player=raw", "checkpoint=README.md", "deals=1",
                 "workers=1")
    monkeypatch.chdir(ROOT)
    assert refused(entry.evaluate, cfg, capsys, monkeypatch) == (
        "error: README.md: not a checkpoint (not a file torch.save writes) (debug=true shows "
        "the traceback)\n")


@pytest.mark.parametrize("argv", [["--wpg", "--matrix"], ["--matrix", "deals=2", "mode=belief"]])
def test_two_modes_are_refused(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        entry.evaluate_arguments(argv)
    modes = " and ".join(a for a in argv if a.startswith(("--", "mode=")))
    assert exit_.value.code == 2 and capsys.readouterr().err == (
        f"error: {modes}: choose one mode (debug=true shows the traceback)\n")
    assert entry.evaluate_arguments(["--wpg", "mode=wpg"]) == ["mode=wpg", "mode=wpg"]


def test_more_deals_than_the_file_holds_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(entry, "GAMES", {game: replace(row, evaluate=_not_refused)
                                         for game, row in entry.GAMES.items()})
    err = refused(entry.evaluate, config("evaluate", "mode=wpg", "player=random", "deals=5000"),
                  capsys, monkeypatch)
    assert err == ("error: deals=5000: the standard deal file holds only 1024 deals "
                   "(deals_file=PATH plays another file) (debug=true shows the traceback)\n")
    three = tmp_path / "three.txt"
    deals = [line for line in DEFAULT_DEALS_FILE.read_text().splitlines() if line[:1] != "#"]
    three.write_text("\n".join(deals[:3]) + "\n")
    err = refused(entry.evaluate, config("evaluate", "mode=belief", f"deals_file={three}",
                                         "belief_games=4"), capsys, monkeypatch)
    assert err.startswith(f"error: belief_games=4: {three} holds only 3 deals (debug")


def _help_groups(name: str) -> dict[str, set[str]]:
    """The config groups `python name --help` lists (run in this process): group -> options."""
    proc = script(name, "--help")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    section = out.partition("== Config groups")[2].partition("\n\n")[0]
    return {m[1]: set(m[2].split(", ")) for m in re.finditer(r"^(\w+): (.+)$", section, re.M)}


def test_each_commands_help_lists_only_the_groups_it_takes():
    options = {d.name: {f.stem for f in d.glob("*.yaml")}
               for d in (ROOT / "configs").iterdir() if d.is_dir()}
    assert _help_groups("play.py") == {}
    assert _help_groups("evaluate.py") == {"game": options["game"]}
    # train_root is how game=gongzhu adds its groups, never picked by hand
    assert _help_groups("train.py") == {k: v for k, v in options.items() if k != "train_root"}


def _value(cfg: dict, key: str):
    for part in key.split("."):
        if not isinstance(cfg, dict) or part not in cfg:
            return KeyError
        cfg = cfg[part]
    return cfg


BAD_EXAMPLES = {"train.seed=1e23"}  # quoted as a value hydra refuses, not as a default


def test_the_defaults_commands_md_quotes_are_the_configs():
    """Every `key=NUMBER` quoted alone in docs/commands.md that names a setting of train.py
    (the `cpu` preset, what `python train.py` runs) or evaluate.py is that setting's value
    there (its options are spelled `key=N`, `key=PATH` or as words: not numbers)."""
    text = (ROOT / "docs" / "commands.md").read_text()
    configs = [OmegaConf.to_container(config(name), resolve=True) for name in ("train",
                                                                               "evaluate")]
    quoted = re.findall(r"`([a-z_][\w.]*)=(-?[\d.]+(?:e-?\d+)?)`", text)
    checked = []
    for key, value in quoted:
        found = next((v for v in (_value(c, key) for c in configs) if v is not KeyError), None)
        if f"{key}={value}" in BAD_EXAMPLES or type(found) not in (int, float):
            continue  # an example value, or not a number setting
        checked.append(key)
        assert float(value) == found, f"docs/commands.md quotes {key}={value}; it is {found}"
    assert {"train.eval_every", "search.c_uct", "ray.actors"} <= set(checked)


def test_the_cpu_preset_ends_at_the_shipped_network_and_the_bar_counts_it():
    settings = settings_of(config("train"))
    t = settings.train
    games, per_batch = 0, t.games_per_batch
    for _ in range(t.max_batches):  # the schedule's batch size, phase by phase
        per_batch = next((p.games_per_batch for p in reversed(t.schedule)
                          if p.from_games <= games and p.games_per_batch), per_batch)
        games += per_batch
    assert games == 491_520  # the shipped network's games (models/scrofazero.md)
    bar = progress_bar(SimpleNamespace(step=0), settings)
    assert bar.total == t.max_batches
    bar.close()


def test_readme_says_how_long_the_first_command_runs_after_the_cpu_torch_note():
    readme = (ROOT / "README.md").read_text()
    setup = readme.partition("## Set-up")[2].partition("\n## ")[0]
    assert setup.index("download.pytorch.org/whl/cpu") < setup.index("python train.py")
    batches = re.search(r"([\d,]+) batches", setup)
    assert batches and int(batches[1].replace(",", "")) == config("train").train.max_batches
    for said in ("checkpoints/", "runs/", "Ctrl-C", "resume=true"):
        assert said in setup, said
