"""Bad settings on the command lines are refused before any work, in one line naming the setting.

Invariants: every game's settings (Gongzhu's model, search, train and ray groups, Fish, Tiny
Crew, the table server) are checked against the bounds their dataclasses declare, every float
anywhere in them must be finite, the network must stay within generous size bounds and the
device must exist on this machine; train.py and evaluate.py end such a command (one with a value
hydra cannot convert to its field's type, too) with one line on stderr and exit status 2, and a
refused train.py run leaves no run folder. The check and its
messages are tested on a made-up dataclass too, so that a broken check cannot pass silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import torch
from composed import config, refused, script
from omegaconf import OmegaConf

from scrofazero import entry
from scrofazero.config import check_device, check_evaluate, check_train
from scrofazero.nn.network import MAX_PARAMETERS, PolicyValueNet, num_parameters, parameter_count
from scrofazero.serve.common.config import PlayConfig
from scrofazero.settings import Count, Positive, check_bounds, one_of


@dataclass
class Inner:
    rate: Positive = 1.0
    free: float = 0.5  # declared nothing: still must be finite


@dataclass
class Toy:
    count: Count = 1
    sizes: list[Count] = field(default_factory=lambda: [1, 2])
    kind: one_of("a", "b") = "a"
    limit: Positive | None = None
    inner: Inner = field(default_factory=Inner)


@pytest.mark.parametrize("change, message", [
    ({"count": 0}, "toy.count=0: must be greater than or equal to 1"),
    ({"sizes": [1, 0]}, "toy.sizes[1]=0: must be greater than or equal to 1"),
    ({"kind": "c"}, "toy.kind='c': choose a or b"),
    ({"limit": float("inf")}, "toy.limit=inf: must be a finite number"),
    ({"limit": -1.0}, "toy.limit=-1.0: must be greater than 0"),
    ({"inner": Inner(rate=0.0)}, "toy.inner.rate=0.0: must be greater than 0"),
    ({"inner": Inner(free=float("nan"))}, "toy.inner.free=nan: must be a finite number"),
])
def test_the_check_names_the_first_bad_setting(change, message):
    assert check_bounds(Toy(), "toy") == Toy()
    assert check_bounds(Toy(limit=2.0), "toy").limit == 2.0
    with pytest.raises(ValueError) as err:
        check_bounds(Toy(**change), "toy")
    assert str(err.value) == message


BAD_TRAIN = [
    ("train.lr=inf", "train.lr=inf: must be a finite number"),
    ("train.lr=0", "train.lr=0.0: must be greater than 0"),
    ("train.beta=nan", "train.beta=nan: must be a finite number"),
    ("train.device=foo", "train.device=foo: not a device"),
    ("train.betas=[0.3]", "train.betas=[0.3]: must have at least 2 items"),
    ("train.betas=[0.3,1.5]", "train.betas[1]=1.5: must be less than 1"),
    ("train.seed=-1", "train.seed=-1: must be greater than or equal to 0"),
    ("train.seed=100000000000000000000000", "train.seed=100000000000000000000000: must be less"),
    ("train.max_minutes=nan", "train.max_minutes=nan: must be a finite number"),
    ("train.milestone_minutes=[-5]", "train.milestone_minutes[0]=-5.0: must be greater"),
    ("train.playout_full=0", "train.playout_full=0.0: must be greater than 0"),
    ("train.value_loss=mae", "train.value_loss='mae': choose rmse or mse"),
    ("train.policy_target=best", "train.policy_target='best': choose q or visits or gumbel"),
    ("train.warm_start.lr=inf", "train.warm_start.lr=inf: must be a finite number"),
    ("train.ema=1", "train.ema=1.0: must be less than 1"),
    ("train.ema=-0.5", "train.ema=-0.5: must be greater than or equal to 0"),
    ("search.c_uct=nan", "search.c_uct=nan: must be a finite number"),
    ("search.c_puct=inf", "search.c_puct=inf: must be a finite number"),
    ("search.budget_base=1000000000", "search.budget_base=1000000000: must be less than"),
    ("model.value_scale=0", "model.value_scale=0.0: must be greater than 0"),
    ("model.num_blocks=1000000000", "model.num_blocks=1000000000: must be less than or equal"),
    ("model.hidden=[1000000]", "model.hidden[0]=1000000: must be less than or equal to 65536"),
    ("model.hidden=[30000,30000,30000]", "model.hidden=[30000, 30000, 30000] with "
                                         "model.num_blocks=4: 9.01e+09 parameters"),
    ("train.schedule=[{from_games:0,hidden:[60000,60000]}]", "train.schedule[0].hidden="),
    ("distributed=mpi", "distributed='mpi': choose none or ray"),
    ("ray.actors=0", "ray.actors=0: must be greater than or equal to 1"),
    ("ray.actor_gpus=nan", "ray.actor_gpus=nan: must be a finite number"),
    ("game=fish game.selfplay.gamma=0", "game.selfplay.gamma=0.0: must be greater than 0"),
    ("game=fish game.selfplay.lr=inf", "game.selfplay.lr=inf: must be a finite number"),
    ("game=fish game.selfplay.train_sizes=[7]", "game.selfplay.train_sizes[0]=7: choose 6 or 8"),
    ("game=fish game.selfplay.helping=[0.5]",
     "game.selfplay.helping=[0.5]: must have at least 2 items"),
    ("game=fish game.selfplay.hidden=1000000000",
     "game.selfplay.hidden=1000000000: must be less than or equal"),
    ("game=fish game.selfplay.opponent=human",
     "game.selfplay.opponent='human': choose self or logic"),
    ("game=tiny_crew game.method=dqn", "game.method='dqn': choose cfr or mccfr"),
    ("game=tiny_crew game.t1=3", "game.t1=3: must be less than or equal to 2"),
    ("game=tiny_crew game.iterations=0", "game.iterations=0: must be greater than or equal"),
    ("run=a/b", "run='a/b': a run name is a plain folder name, not empty or a path"),
    ("run=..", "run='..': a run name is a plain folder name"),
    ("game=fish run=", "run='': a run name is a plain folder name"),
    ("train.eval_deals=0", "train.eval_deals=0: must be >= 1 while train.eval_every="),
    ("resume=true resume_from=state.pt", "resume=true and resume_from=PATH"),
    ("train.init_from=a.pt resume_from=b.pt", "train.init_from and resume_from"),
    ("train.warm_start.epochs=0", "train.warm_start.epochs=0: must be greater than or equal"),
    ("train.schedule=[{from_games:0,passes:0}]", "train.schedule[0].passes=0: must be greater"),
    ("train.schedule=[{from_games:5},{from_games:3}]",
     "train.schedule[1].from_games=3: phases must start at increasing"),
]


@pytest.mark.parametrize("overrides, message", BAD_TRAIN)
def test_bad_train_settings_are_named(overrides, message):
    with pytest.raises(ValueError) as err:
        check_train(OmegaConf.to_object(config("train", *overrides.split())))
    assert str(err.value).startswith(message)


def test_settings_that_depend_on_each_other_pass_together():
    check_train(OmegaConf.to_object(config("train", "train.eval_every=0", "train.eval_deals=0")))
    check_train(OmegaConf.to_object(config("train", "resume_from=state.pt")))


@pytest.mark.parametrize("overrides, message", [
    ("scrofazero.search.c_uct=nan", "scrofazero.search.c_uct=nan: must be a finite number"),
    ("scrofazero.weighting.beta_post=inf", "scrofazero.weighting.beta_post=inf: must be a finite"),
    ("scrofazero.endgame.trick=14", "scrofazero.endgame.trick=14: must be less than or equal"),
    ("scrofazero.endgame.shared=13", "scrofazero.endgame.shared=13: must be less than or equal"),
    ("scrofazero.endgame.table_bits=40",
     "scrofazero.endgame.table_bits=40: must be less than or equal to 26"),
    ("seed=-3", "seed=-3: must be greater than or equal to 0"),
    ("ray.tasks=0", "ray.tasks=0: must be greater than or equal to 1"),
    ("game=fish game.track.soft=nan", "game.track.soft=nan: must be a finite number"),
    ("game=fish game.track.ask_other=1.5",
     "game.track.ask_other=1.5: must be less than or equal to 1"),
    ("game=fish game.match.table_sizes=[]", "game.match.table_sizes=[]: must have at least 1 item"),
    ("game=tiny_crew game.leader=dealer", "game.leader='dealer': choose seat0 or captain"),
    ("game=tiny_crew game.deal_stride=0", "game.deal_stride=0: must be greater than or equal"),
])
def test_bad_evaluate_settings_are_named(overrides, message):
    with pytest.raises(ValueError) as err:
        check_evaluate(OmegaConf.to_object(config("evaluate", *overrides.split())))
    assert str(err.value).startswith(message)


@pytest.mark.parametrize("name", ["train", "evaluate"])
@pytest.mark.parametrize("game", ["gongzhu", "fish", "tiny_crew"])
def test_every_shipped_preset_passes(name, game):
    check = check_train if name == "train" else check_evaluate
    presets = ["experiment=cpu", "experiment=smoke", "experiment=paper"]  # Gongzhu's training
    for preset in presets if (name, game) == ("train", "gongzhu") else [""]:
        check(OmegaConf.to_object(config(name, f"game={game}", *preset.split())))


@pytest.mark.parametrize("change, message", [
    ("port=70000", "port=70000: must be less than or equal to 65535"),
    ("move_deadline_s=inf", "move_deadline_s=inf: must be a finite number"),
    ("log_level=loud", "log_level='loud': choose critical or error"),
])
def test_bad_play_settings_are_named(change, message, capsys, monkeypatch):
    key, value = change.split("=")
    cfg = OmegaConf.structured(PlayConfig)
    cfg[key] = value
    err = refused(entry.play, cfg, capsys, monkeypatch)
    assert err.startswith(f"error: {message}") and len(err.splitlines()) == 1


@pytest.mark.parametrize("overrides", [
    "train.lr=inf", "train.beta=nan", "train.betas=[0.3]", "train.device=foo", "train.ema=nan",
    "model.num_blocks=1000000000", "game=fish game.selfplay.lr=nan", "game=tiny_crew game.method=x",
])
def test_train_refuses_before_a_run_folder_exists(overrides, tmp_path, capsys, monkeypatch):
    preset = [] if overrides.startswith("game=") else ["experiment=smoke"]  # Gongzhu's presets
    cfg = config("train", *preset, f"checkpoint_dir={tmp_path / 'ck'}",
                 f"log_dir={tmp_path / 'runs'}", *overrides.split())
    err = refused(entry.train, cfg, capsys, monkeypatch)
    assert len(err.splitlines()) == 1 and overrides.split()[-1].split("=")[0] in err
    assert not (tmp_path / "ck").exists() and not (tmp_path / "runs").exists()


def test_cuda_is_refused_by_name_on_a_machine_without_it(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match=r"^train.device=cuda: this machine has 0 CUDA devices"):
        check_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    check_device("cuda")
    check_device("cuda:1")
    with pytest.raises(ValueError, match=r"^train.device=cuda:2: this machine has 2 CUDA"):
        check_device("cuda:2")
    for name in ("auto", "cpu"):
        check_device(name)
    for name in ("foo", "meta", "cuda:x"):
        with pytest.raises(ValueError, match=f"^train.device={name}: not a device"):
            check_device(name)


@pytest.mark.parametrize("hidden, num_blocks, aux", [
    ((64, 32), 1, False), ((512, 256), 4, True), ((7,), 0, False),
])
def test_parameter_count_is_that_of_the_built_network(hidden, num_blocks, aux):
    net = PolicyValueNet(hidden, num_blocks, aux=aux)
    assert parameter_count(hidden, num_blocks, aux=aux) == num_parameters(net)


def test_an_oversized_network_is_refused_before_it_is_built():
    assert parameter_count((2048, 2048, 512), 10) < MAX_PARAMETERS  # the paper's
    with pytest.raises(ValueError, match=r"hidden=\[40000, 40000\] with num_blocks=10"):
        PolicyValueNet((40000, 40000), 10)  # would take 13 GB: refused at once
    with pytest.raises(ValueError, match="num_blocks=2000: must lie in 0..1000"):
        PolicyValueNet((8,), 2000)


def _script(*args):
    """The script run in this process (composed.script; tests/train/test_run_state.py runs the
    same refusal in a real process once)."""
    return script(*args, "progress=false")


@pytest.mark.parametrize("setting, message", [
    ("train.lr=inf", "train.lr=inf: must be a finite number"),
    # refused by hydra while composing, before our check: the same one line and status
    ("train.seed=1e23", "train.seed=1e23: Value '1e+23' of type 'float' could not be converted "
                        "to Integer"),
])
def test_train_py_ends_a_bad_setting_with_one_line_and_status_2(setting, message, tmp_path):
    proc = _script("train.py", "experiment=smoke", f"checkpoint_dir={tmp_path / 'ck'}",
                   f"log_dir={tmp_path / 'runs'}", setting)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.splitlines() == [f"error: {message} (debug=true shows the traceback)"]
    assert not (tmp_path / "ck").exists()
