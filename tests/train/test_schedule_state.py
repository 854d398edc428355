"""Training across sittings: phases by games (train.schedule), a network grown mid-run, the
compact state file (train.state_file) continued exactly in a new folder (resume_from), and a
fresh run from a network (train.init_from). In-process on the smoke preset."""

import pytest
import torch
from composed import config, settings_of
from omegaconf import OmegaConf

from scrofazero.config import check_train
from scrofazero.nn.checkpoint import load_checkpoint, load_model, recast_weights, save_model_file
from scrofazero.nn.network import PolicyValueNet
from scrofazero.train.loop import run_training
from scrofazero.train.schedule import check_schedule, phase_index, phase_settings

BASE = {"games_per_batch": 2, "replay_batches": 3, "passes": 1, "lr": 1e-4, "playout_full": 1.0,
        "search_scale": 1.0, "inference": "float32"}
SHAPE = {"hidden": [64, 32], "num_blocks": 1}


def _settings(tmp_path, run, *extra):
    return settings_of(_cfg(tmp_path, run, *extra))


def _cfg(tmp_path, run, *extra):
    return config("train", "experiment=smoke", "train.games_per_batch=2", "train.eval_every=0",
                  "train.checkpoint_every=1", f"run={run}",
                  f"checkpoint_dir={tmp_path / 'ckpt'}", f"log_dir={tmp_path / 'runs'}", *extra)


def test_phases_carry_unset_settings_over():
    schedule = [{"from_games": 10, "lr": 5e-5, "games_per_batch": 4, "playout_full": 0.5},
                {"from_games": 20, "replay_batches": 1, "hidden": [96, 32]}]
    assert [phase_index(schedule, g) for g in (0, 9, 10, 19, 20, 10**6)] == [-1, -1, 0, 0, 1, 1]
    assert phase_settings(schedule, -1, BASE, SHAPE) == (BASE, SHAPE)
    settings, shape = phase_settings(schedule, 1, BASE, SHAPE)
    assert settings == {"games_per_batch": 4, "replay_batches": 1, "passes": 1, "lr": 5e-5,
                        "playout_full": 0.5, "search_scale": 1.0, "inference": "float32"}
    assert shape == {"hidden": [96, 32], "num_blocks": 1}


@pytest.mark.parametrize("schedule, named", [
    ([{"from_games": 10}, {"from_games": 10}],
     "[1].from_games=10: phases must start at increasing"),
    ([{"from_games": 0, "hidden": [32, 32]}], "[0]: cannot grow"),
    ([{"from_games": 0, "hidden": [96, 64]}, {"from_games": 5, "hidden": [64, 64]}],
     "[1]: cannot grow"),
])
def test_phases_that_do_not_follow_each_other_are_named(schedule, named):
    with pytest.raises(ValueError) as err:
        check_schedule(schedule, BASE, SHAPE)
    assert named in str(err.value)


@pytest.mark.parametrize("phases, named", [
    ("{from_games:-1}", "train.schedule[0].from_games=-1: must be greater than or equal to 0"),
    ("{from_games:0,passes:0}", "train.schedule[0].passes=0: must be greater than or equal"),
    ("{from_games:0,lr:0.0}", "train.schedule[0].lr=0.0: must be greater than 0"),
    ("{from_games:0,playout_full:0.0}", "train.schedule[0].playout_full=0.0: must be greater"),
    ("{from_games:0,playout_full:1.5}", "train.schedule[0].playout_full=1.5: must be less"),
    ("{from_games:0,search_scale:0.0}", "train.schedule[0].search_scale=0.0: must be greater"),
    ("{from_games:0,inference:float16}", "train.schedule[0].inference='float16': choose"),
    ("{from_games:0,hidden:[]}", "train.schedule[0].hidden=[]: must have at least 1 item"),
    ("{from_games:0,num_blocks:-1}", "train.schedule[0].num_blocks=-1: must be greater"),
    ("{from_games:4},{from_games:4}", "train.schedule[1].from_games=4: phases must start"),
    ("{from_games:0,hidden:[32,32]}", "train.schedule[0]: cannot grow"),
])
def test_senseless_phases_are_named_by_the_config_check(phases, named, tmp_path):
    cfg = _cfg(tmp_path, "s", f"train.schedule=[{phases}]")
    with pytest.raises(ValueError) as err:
        check_train(OmegaConf.to_object(cfg))
    assert str(err.value).startswith(named)


def test_a_phase_changes_batches_grows_the_network_and_resumes(tmp_path):
    schedule = ("train.schedule=[{from_games:4,games_per_batch:3,replay_batches:1,lr:2e-4,"
                "hidden:[96,32],num_blocks:2},{from_games:7,playout_full:0.5}]")
    settings = _settings(tmp_path, "p", "train.max_batches=4", schedule)
    run = run_training(settings)
    # Two batches of 2 games, then the phase: two of 3.
    assert run.games == 2 + 2 + 3 + 3 and run.phase == 1
    now = run.in_force(settings)  # the train settings with the phases' in force
    assert (now.playout_full, now.games_per_batch, now.lr) == (0.5, 3, 2e-4)
    assert settings.train.playout_full == 1.0  # the run's own settings are as given
    assert run.model.config()["hidden"] == [96, 32] and run.model.num_blocks == 2
    assert [g["lr"] for g in run.optimizer.param_groups] == [2e-4]
    assert run.replay.max_batches == 1
    payload = load_checkpoint(tmp_path / "ckpt" / "p" / "latest.pt")
    change, later = payload["extra"]["phases"]
    assert (change["phase"], change["step"], change["games"], change["grown"]) == (0, 2, 4, True)
    assert (later["phase"], later["games"], later["grown"], later["playout_full"]) == \
        (1, 7, False, 0.5)
    # The grown checkpoint resumes (its shape is the phase's, not the model group's).
    settings = _settings(tmp_path, "p", "train.max_batches=5", schedule, "resume=true")
    more = run_training(settings)
    assert more.step == 5 and more.games == 13 and more.model.num_blocks == 2
    assert more.in_force(settings).playout_full == 0.5


def _weights(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


def test_state_file_continues_exactly_in_a_new_folder(tmp_path):
    common = ("train.replay_batches=1", "train.passes=2")
    straight = run_training(_settings(tmp_path, "a", "train.max_batches=4", *common))
    state = tmp_path / "committed" / "state.pt"
    first = run_training(_settings(tmp_path, "b", "train.max_batches=2", *common,
                              f"train.state_file={state}"))
    assert first.step == 2
    payload = load_checkpoint(state)
    assert "replay" not in payload["extra"] and payload["optimizer"] is not None
    # A new machine: only the state file, a new run folder.
    cont = run_training(_settings(tmp_path, "c", "train.max_batches=4", *common,
                             f"resume_from={state}"))
    assert (cont.step, cont.games) == (straight.step, straight.games) == (4, 8)
    a, c = _weights(straight.model), _weights(cont.model)
    assert all(torch.equal(a[k], c[k]) for k in a), "continued weights differ from a straight run"
    assert cont.train_seconds > first.train_seconds


def test_bfloat16_moments_halve_the_optimiser_and_continue_close(tmp_path):
    common = ("train.replay_batches=1",)
    exact, small = tmp_path / "f32.pt", tmp_path / "bf16.pt"
    run_training(_settings(tmp_path, "a", "train.max_batches=1", *common,
                      f"train.state_file={exact}"))
    run_training(_settings(tmp_path, "b", "train.max_batches=1", *common,
                      f"train.state_file={small}", "train.state_moments=bfloat16"))
    moments = [t for s in load_checkpoint(small)["optimizer"]["state"].values()
               for n, t in s.items() if n != "step"]
    assert moments and all(t.dtype == torch.bfloat16 for t in moments)
    a = run_training(_settings(tmp_path, "c", "train.max_batches=2", *common,
                               f"resume_from={exact}"))
    b = run_training(_settings(tmp_path, "d", "train.max_batches=2", *common,
                               f"resume_from={small}",
                          "resume_overrides=[train.state_moments]"))
    wa, wb = _weights(a.model), _weights(b.model)
    assert all(torch.allclose(wa[k], wb[k], atol=1e-4) for k in wa)


def test_float16_weights_halve_the_network_and_continue_close(tmp_path):
    common = ("train.replay_batches=1", "train.state_moments=bfloat16")
    exact, small = tmp_path / "f32.pt", tmp_path / "f16.pt"
    run_training(_settings(tmp_path, "a", "train.max_batches=1", *common,
                      f"train.state_file={exact}"))
    run_training(_settings(tmp_path, "b", "train.max_batches=1", *common,
                      f"train.state_file={small}", "train.state_weights=float16"))
    stored = load_checkpoint(small)["model"]
    assert all(t.dtype == torch.float16 for t in stored.values() if t.is_floating_point())
    assert small.stat().st_size < 0.8 * exact.stat().st_size
    # The file's network reads back in float32, within float16's rounding of the exact one.
    wa, wb = _weights(load_model(exact)), _weights(load_model(small))
    assert all(wb[k].dtype == torch.float32 for k in wb)
    assert all(torch.allclose(wa[k], wb[k], rtol=1e-3, atol=1e-4) for k in wa)
    assert any(not torch.equal(wa[k], wb[k]) for k in wa), "nothing was rounded"
    a = run_training(_settings(tmp_path, "c", "train.max_batches=2", *common,
                               f"resume_from={exact}"))
    b = run_training(_settings(tmp_path, "d", "train.max_batches=2", *common,
                               f"resume_from={small}"))
    wa, wb = _weights(a.model), _weights(b.model)
    assert all(wb[k].dtype == torch.float32 for k in wb)
    assert all(torch.allclose(wa[k], wb[k], rtol=1e-3, atol=2e-4) for k in wa)
    with pytest.raises(ValueError, match="state_weights"):
        check_train(OmegaConf.to_object(_cfg(tmp_path, "e", "train.state_weights=int8")))
    # A float32 state file recast afterwards holds what the float16 run wrote, and continues the
    # same way.
    before = load_checkpoint(exact)
    recast_weights(exact)
    after, written = load_checkpoint(exact), load_checkpoint(small)
    assert all(torch.equal(after["model"][k], written["model"][k]) for k in written["model"])
    assert after["extra"].keys() == before["extra"].keys() and after["step"] == before["step"]
    e = run_training(_settings(tmp_path, "f", "train.max_batches=2", *common,
                               f"resume_from={exact}"))
    we = _weights(e.model)
    assert all(torch.equal(we[k], wb[k]) for k in wb)


def test_float16_model_file_computes_what_the_network_does(tmp_path):
    torch.manual_seed(5)
    net = PolicyValueNet([64, 32], 1).eval()
    half = save_model_file(tmp_path / "half.pt", net, weights="float16")
    full = save_model_file(tmp_path / "full.pt", net)
    assert half.stat().st_size < 0.7 * full.stat().st_size
    back = load_model(half)
    x = (torch.rand(64, 434) < 0.15).float()
    with torch.no_grad():
        (p1, v1), (p2, v2) = net(x)[:2], back(x)[:2]
    assert torch.allclose(p1, p2, atol=1e-2) and torch.allclose(v1, v2, atol=5e-2)
    with pytest.raises(ValueError, match="bfloat8"):
        save_model_file(tmp_path / "bad.pt", net, weights="bfloat8")


def test_resume_from_refuses_a_network_only_file_and_changed_settings(tmp_path):
    model_file = save_model_file(tmp_path / "net.pt", PolicyValueNet([64, 32], 1))
    with pytest.raises(ValueError, match="train.init_from=PATH"):
        run_training(_settings(tmp_path, "a", "train.max_batches=1", f"resume_from={model_file}"))
    state = tmp_path / "state.pt"
    run_training(_settings(tmp_path, "b", "train.max_batches=1", f"train.state_file={state}"))
    with pytest.raises(ValueError, match=r"train.passes: 1 -> 2"):
        run_training(_settings(tmp_path, "c", "train.max_batches=2", "train.passes=2",
                          f"resume_from={state}"))


def test_init_from_grows_a_network_and_records_where_it_came_from(tmp_path):
    torch.manual_seed(3)
    parent = PolicyValueNet([64, 32], 1).eval()
    path = save_model_file(tmp_path / "parent.pt", parent, step=77)
    run = run_training(_settings(tmp_path, "g", "train.max_batches=1", "model.hidden=[96,48]",
                            "model.num_blocks=2", f"train.init_from={path}"))
    assert run.init_from["grown"] and run.init_from["step"] == 77
    assert run.init_from["model_config"]["hidden"] == [64, 32]
    assert len(run.init_from["sha256"]) == 64
    # The step-0 checkpoint holds the grown network, which computes what the parent did.
    start = load_model(tmp_path / "ckpt" / "g" / "games_0.pt")
    assert start.config()["hidden"] == [96, 48]
    x = (torch.rand(32, 434) < 0.15).float()
    with torch.no_grad():
        assert torch.allclose(start(x)[0], parent(x)[0], atol=1e-5)
    assert load_checkpoint(tmp_path / "ckpt" / "g" / "latest.pt")["extra"]["init_from"]["path"] \
        == str(path)
    with pytest.raises(ValueError, match="cannot grow"):
        run_training(_settings(tmp_path, "h", "train.max_batches=1", "model.hidden=[32,32]",
                          f"train.init_from={path}"))


def test_resume_true_gives_the_weights_of_a_run_that_never_stopped(tmp_path):
    common = ("train.replay_batches=3", "train.passes=2")  # the replay travels in latest.pt
    straight = run_training(_settings(tmp_path, "a", "train.max_batches=4", *common))
    run_training(_settings(tmp_path, "b", "train.max_batches=2", *common))
    resumed = run_training(_settings(tmp_path, "b", "train.max_batches=4", *common, "resume=true"))
    a, b = _weights(straight.model), _weights(resumed.model)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_phase_switches_selfplay_to_bfloat16(tmp_path):
    settings = _settings(tmp_path, "bf", "train.max_batches=3",
                         "train.schedule=[{from_games:4,inference:bfloat16}]")
    run = run_training(settings)
    assert run.in_force(settings).inference == "bfloat16" and run.games == 6
    assert [(p["games"], p["inference"]) for p in run.phases] == [(4, "bfloat16")]
    with pytest.raises(ValueError, match="train.inference"):
        check_train(OmegaConf.to_object(_cfg(tmp_path, "bad", "train.inference=int8")))
