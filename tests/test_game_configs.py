"""Each game owns its configuration (scrofazero/config.py, configs/, scrofazero/entry.py).

Invariants: train.py's root holds what every game's run has; Gongzhu's model, search and train
groups and its experiment preset are composed for game=gongzhu only, so a Tiny Crew or Fish
run's resolved config has none of them (and refuses their settings), and `leader` is Tiny
Crew's. The Gongzhu command lines of README.md, docs/commands.md and models/long_run/continue.sh
resolve to the settings they resolved to at commit b0b7147 (tests/data/configs_b0b7147.json),
but for `game.leader` (gone), the root's `seed` (new, and train.seed follows it),
`train.search_scale` (new, 1 = off), `train.state_weights` and `train.inference` (new,
float32 = as before), `train.ema` (new, 0 = off), `train.actors` (new, 0 = self-play in the
learner's process, as before), `train.learner_precision` (new, auto = as before), the `cpu`
preset's schedule (two phases added at its end) and length (it stops at the shipped network's
491,520 games, 4800 batches, where it ran forever),
evaluate's `belief_opponent` (new, None = as before) and the player's
`scrofazero.weighting.plays` (new, relevant = the paper's plays, as before) and
`scrofazero.precision` (new, float32 = as before), and the
long run's stored settings still allow it to resume. evaluate.py's players' settings are groups
named after each player (`greed.num_samples`, `raw.mode`, `raw.sampling.*`, `scrofazero.*`); the
old names (flat, and the raw player's before its sampling settings were the sampler's group) are
deprecated aliases that set the same values; train.py's `learner` and `inference` group are new
(self-play by default). A command line hydra cannot
compose (a value that cannot be converted to its field's type, an unknown setting or option)
ends in one line naming it and exit status 2; an error inside a job is not mistaken for one.
"""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from composed import ROOT, config, settings_of
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf
from omegaconf.errors import ConfigKeyError

from scrofazero import entry
from scrofazero.agents import player_spec
from scrofazero.agents.endgame import EndgameConfig
from scrofazero.agents.mr_greed import GreedSettings
from scrofazero.agents.raw_net import RawSettings
from scrofazero.agents.scrofazero_agent import ScrofaZeroSettings
from scrofazero.config import (
    EvaluateConfig,
    GongzhuTrainConfig,
    TrainRootConfig,
    check_evaluate,
    check_train,
    evaluate_settings,
)
from scrofazero.eval.runner import player_settings
from scrofazero.runs import _flatten, settings_changes
from scrofazero.sampling.sampler import SamplingConfig
from scrofazero.train.state import ALWAYS_MAY_CHANGE

BEFORE = json.loads((ROOT / "tests" / "data" / "configs_b0b7147.json").read_text())
GONGZHU_GROUPS = ("model", "search", "train", "experiment")
FLAT_NAMES = {"greed_samples": "greed.num_samples", "raw_deals": "raw.sampling.num_deals",
              "raw_mode": "raw.mode", "raw.num_deals": "raw.sampling.num_deals",
              "raw.sampling": "raw.sampling.method", "raw.beliefs": "raw.sampling.beliefs",
              "raw.calibrate": "raw.sampling.calibrate",
              "raw.calibrate_above": "raw.sampling.calibrate_above"}
# The full player's defaults that moved when its deals began to come from the card-location
# network (18 deals drawn from it, no IEC weights); every other setting resolves as it did.
PLAYER_DEFAULTS_MOVED = ["scrofazero.sampling.method", "scrofazero.sampling.num_deals",
                         "scrofazero.weighting.enabled"]
# The sampling settings of the methods that weigh worlds by the plays (policy, posterior), new
# since and unread by the other methods.
WEIGHING = {"proposals": 128, "keep": 256, "refresh_ess": 16.0, "floor": 0.01,
            "temperature": 1.0, "prior": "uniform", "behaviour": "", "greed_draws": 128}


def resolved(name, *overrides) -> dict:
    return OmegaConf.to_container(config(name, *overrides), resolve=True)


@pytest.mark.parametrize("game", ["tiny_crew", "fish"])
def test_a_side_games_run_has_none_of_gongzhus_groups(game):
    cfg = config("train", f"game={game}")
    settings = OmegaConf.to_object(cfg)
    assert type(settings) is TrainRootConfig and not isinstance(settings, GongzhuTrainConfig)
    assert not set(GONGZHU_GROUPS) & set(cfg)
    assert {"run", "seed", "resume", "resume_from", "resume_overrides", "progress", "debug",
            "distributed", "ray", "checkpoint_dir", "log_dir"} <= set(cfg)
    assert ("leader" in cfg.game) == (game == "tiny_crew")
    check_train(settings)
    for setting in ("model.num_blocks=2", "train.seed=1", "search.c_uct=3", "experiment=cpu"):
        with pytest.raises(ConfigCompositionException):
            config("train", f"game={game}", setting)


def test_leader_is_tiny_crews_and_gongzhu_has_the_groups():
    assert config("train", "game=tiny_crew", "game.leader=captain").game.leader == "captain"
    for name in ("train", "evaluate"):
        assert resolved(name)["game"] == {"name": "gongzhu"}
        with pytest.raises(ConfigCompositionException):
            config(name, "game.leader=1")
    cfg = config("train")
    assert type(OmegaConf.to_object(cfg)) is GongzhuTrainConfig
    assert set(GONGZHU_GROUPS) <= set(cfg)
    assert config("train", "seed=7").train.seed == 7  # train.seed follows the root's seed
    assert config("train", "seed=7", "train.seed=3").train.seed == 3


@pytest.mark.parametrize("case", BEFORE["train"], ids=lambda c: " ".join(c["args"])[:40])
def test_gongzhu_train_command_lines_resolve_as_before(case):
    old, new = case["config"], resolved("train", *case["args"])
    own_schedule = any(a.startswith("train.schedule=") for a in case["args"])
    if new["experiment"] == "cpu" and not own_schedule:
        # The `cpu` preset's schedule gained two phases at its end (the shipped network's
        # lineage, models/scrofazero.md); what came before them is unchanged.
        added = [{k: v for k, v in phase.items() if v is not None}
                 for phase in new["train"]["schedule"][-2:]]
        assert added == [{"from_games": 276480, "lr": 1e-5},
                         {"from_games": 399360, "search_scale": 2.0}]
        new["train"]["schedule"] = new["train"]["schedule"][:-2]
    if new["experiment"] == "cpu":  # the preset's length, new since (it ran forever)
        assert (old["train"]["max_batches"], new["train"]["max_batches"]) == (None, 4800)
        new["train"]["max_batches"] = None
    assert settings_changes(old, new, PLAYER_DEFAULTS_MOVED) == []
    assert set(_flatten(old)) - set(_flatten(new)) == {"game.leader"}
    inference = {k for k in _flatten(new) if k.startswith("inference.")}  # the inference fits'
    assert inference and new["learner"] == "selfplay"  # new since, self-play by default
    assert set(_flatten(new)) - set(_flatten(old)) == {"seed", "train.search_scale",
                                                       "train.state_weights", "train.inference",
                                                       "train.ema", "train.actors",
                                                       "train.learner_precision", "learner",
                                                       *inference}
    assert new["train"]["ema"] == 0.0  # new since, and off by default
    # new since: self-play in the learner's process, the learner's precision as before
    assert new["train"]["actors"] == "0" and new["train"]["learner_precision"] == "auto"
    assert new["train"]["inference"] == "float32"  # new since, as before by default
    assert new["train"]["search_scale"] == 1.0  # new since, and off by default
    assert new["train"]["state_weights"] == "float32"  # new since, as before by default
    assert new["seed"] == 0 and new["train"]["seed"] == old["train"]["seed"]


def test_the_long_run_resumes_with_its_stored_settings():
    """continue.sh's settings against what models/long_run/state.pt stored (resume's check)."""
    long_run = next(c for c in BEFORE["train"] if "run=long" in c["args"])
    current = resolved("train", *long_run["args"])
    allowed = (*ALWAYS_MAY_CHANGE, "train.schedule")  # continue.sh's resume_overrides
    assert settings_changes(BEFORE["long_run_state"], current, allowed) == []
    changed = resolved("train", *long_run["args"], "search.c_uct=20", "train.lr=1e-3")
    assert settings_changes(BEFORE["long_run_state"], changed, allowed) == [
        "search.c_uct: 30.0 -> 20.0", "train.lr: 0.0001 -> 0.001"]


@pytest.mark.parametrize("case", BEFORE["evaluate"], ids=lambda c: " ".join(c["args"])[:40])
def test_gongzhu_evaluate_command_lines_give_the_same_players(case, capsys):
    cfg = settings_of(config("evaluate", *entry.evaluate_arguments(case["args"])))
    for name, settings in case["players"].items():
        now = dataclasses.asdict(player_settings(cfg, player_spec(name)))
        if name == "scrofazero":  # new since: the paper's plays, float32, by default
            assert now["weighting"].pop("plays") == "relevant"
            assert now.pop("precision") == "float32"
            # the exact endgame (issue 57), at its defaults
            assert now.pop("endgame") == dataclasses.asdict(EndgameConfig())
            # the card-location network's file and calibration (used by method=belief only)
            assert now["sampling"].pop("beliefs") == "" and now["sampling"].pop("calibrate") == 20
            assert now["sampling"].pop("calibrate_above") == 0  # fitted at every trick, as before
            assert {k: now["sampling"].pop(k) for k in WEIGHING} == WEIGHING
            # changed since, when the belief became the default (18 deals from the
            # card-location network, no IEC) and again when those worlds were weighed by the
            # plays (policy)
            assert (now["sampling"]["method"], now["sampling"]["num_deals"]) == ("policy", 18)
            assert now["weighting"]["enabled"] is False
            now["sampling"].update(method="stratified", num_deals=9)
            now["weighting"]["enabled"] = True
        if name == "raw":  # new since: where the raw player's deals come from, as a sampler's
            sampling = now.pop("sampling")  # settings (num_deals moved into them)
            assert (sampling["method"], sampling["beliefs"]) == ("belief", "")
            assert (sampling["calibrate"], sampling["calibrate_above"]) == (20, 0)
            now["num_deals"] = sampling["num_deals"]
        assert now == settings
    new = dataclasses.asdict(cfg)
    old = {k: v for k, v in case["config"].items() if k not in FLAT_NAMES}
    assert settings_changes(old, new, PLAYER_DEFAULTS_MOVED) == []
    assert set(_flatten(old)) - set(_flatten(new)) == {"game.leader"}
    added = set(_flatten(new)) - set(_flatten(old))
    assert {k.split(".")[0] for k in added} - {"belief_opponent", "scrofazero", "opponent"} == {
        "greed", "raw"}
    assert {k for k in added if k.startswith("scrofazero")} == {
        "scrofazero.weighting.plays", "scrofazero.precision", "scrofazero.sampling.beliefs",
        "scrofazero.sampling.calibrate", "scrofazero.sampling.calibrate_above",
        *(f"scrofazero.sampling.{k}" for k in WEIGHING),
        *(f"scrofazero.endgame.{f.name}" for f in dataclasses.fields(EndgameConfig))}
    assert new["belief_opponent"] is None and new["scrofazero"]["weighting"]["plays"] == "relevant"
    notes = capsys.readouterr().err.splitlines()
    assert notes == [f"note: {k}= is deprecated; it sets {v}=" for a in case["args"]
                     for k, v in FLAT_NAMES.items() if a.startswith(k + "=")]


def test_evaluates_player_groups_are_the_registrys_settings():
    fields = {f.name: f.type for f in dataclasses.fields(EvaluateConfig)}
    for name, settings in (("greed", GreedSettings), ("raw", RawSettings),
                           ("scrofazero", ScrofaZeroSettings)):
        assert player_spec(name).settings is settings
        assert getattr(EvaluateConfig(), name) == settings()
    assert not {"greed_samples", "raw_deals", "raw_mode"} & set(fields)
    cfg = settings_of(config("evaluate", "greed.num_samples=3", "raw.mode=policy",
                             "raw.sampling.num_deals=2"))
    assert player_settings(cfg, player_spec("greed")) == GreedSettings(3)
    assert player_settings(cfg, player_spec("raw")) == RawSettings(
        "policy", SamplingConfig(method="belief", num_deals=2))


def test_evaluate_arguments_map_flags_and_aliases():
    assert entry.evaluate_arguments(
        ["--wpg", "model=m.pt", "raw_deals=3", "raw.mode=policy", "greed_samples=1,2",
         "-m", "deals=4"]) == [
        "mode=wpg", "predictor=m.pt", "raw.sampling.num_deals=3", "raw.mode=policy",
        "greed.num_samples=1,2", "-m", "deals=4"]


@pytest.mark.parametrize("setting, message", [
    ("raw.sampling.num_deals=0", "raw.sampling.num_deals=0: must be greater than or equal to 1"),
    ("raw.sampling.method=stratified", "raw.sampling.method='stratified': the raw player draws "
     "no strata; choose uniform or belief or marginals or oracle or oracle_important or policy "
     "or posterior"),
    ("raw.mode=best", "raw.mode='best': choose value or policy"),
    ("greed.num_samples=-1", "greed.num_samples=-1: must be greater than or equal to 1"),
])
def test_a_bad_player_setting_is_named_by_its_group(setting, message):
    with pytest.raises(ValueError) as err:
        check_evaluate(evaluate_settings(config("evaluate", setting)))
    assert str(err.value) == message
    assert isinstance(evaluate_settings(config("evaluate")), EvaluateConfig)


@pytest.mark.parametrize("name, overrides, message", [
    ("train", ["train.seed=1e23"],
     "train.seed=1e23: Value '1e+23' of type 'float' could not be converted to Integer"),
    ("train", ["model.num_blocks=1e9"],
     "model.num_blocks=1e9: Value '1000000000.0' of type 'float' could not be converted to "
     "Integer"),
    ("train", ["game=fish", "model.num_blocks=2"],
     "model.num_blocks is not a setting of this run (model is train.py game=gongzhu's)"),
    ("train", ["game=tiny_crew", "experiment=smoke"], "Could not override 'experiment'. No match "
     "in the defaults list. To append to your default list use +experiment=smoke (model, "
     "search, train, experiment are settings of train.py game=gongzhu only)"),
    ("train", ["experiment=gpu"], "Could not find 'experiment/gpu' Available options in "
     "'experiment': cpu paper smoke"),
    ("evaluate", ["greed.num_samples=many"], "greed.num_samples=many: Value 'many' of type "
     "'str' could not be converted to Integer"),
])
def test_a_setting_hydra_cannot_compose_ends_in_one_line(name, overrides, message, capsys,
                                                         monkeypatch):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
    with pytest.raises(SystemExit) as exit_:
        entry.run_script(lambda: config(name, *overrides))
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"error: {message}")
    assert "HYDRA_FULL_ERROR" not in os.environ  # hydra's switch is the user's again
    monkeypatch.setenv("HYDRA_FULL_ERROR", "1")  # the user asks for the traceback
    with pytest.raises(ConfigCompositionException):
        entry.run_script(lambda: config(name, *overrides))
    assert os.environ["HYDRA_FULL_ERROR"] == "1"


def test_an_error_inside_a_job_is_not_a_composition_error(capsys, monkeypatch):
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)

    def job(cfg):
        raise ConfigKeyError("a bug reading the config")

    with pytest.raises(ConfigKeyError):  # a bug keeps its traceback
        entry.run_script(lambda: entry.reported(job, config("train")))

    def bad_file(cfg):  # a user error in the job: one line, as ever, though hydra would raise
        raise FileNotFoundError("deals.txt not found")

    with pytest.raises(SystemExit) as exit_:
        entry.run_script(lambda: entry.reported(bad_file, config("train")))
    assert exit_.value.code == 2
    assert capsys.readouterr().err.startswith("error: deals.txt not found")

