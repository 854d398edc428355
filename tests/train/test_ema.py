"""The weights' exponential moving average (train.ema): the update is the textbook one, made
after every optimiser step from the weights self-play trains; it leaves training as it was, is
what the evaluation and the saved networks use, survives a kill and a state file, and starts
again when the network grows. In-process on the smoke preset (the kill: a real train.py)."""

import pytest
import torch
from composed import config, refused, settings_of
from kill_run import GlobalRandom, kill_after_checkpoint
from omegaconf import OmegaConf

from scrofazero import entry
from scrofazero.config import check_train
from scrofazero.nn.checkpoint import load_checkpoint, load_model
from scrofazero.nn.network import PolicyValueNet
from scrofazero.train import loop
from scrofazero.train.learner import average_of, update_average
from scrofazero.train.loop import run_training
from scrofazero.train.state import Run

SETTINGS = ("experiment=smoke", "train.games_per_batch=2", "train.eval_every=0",
            "train.checkpoint_every=1", "train.replay_batches=1", "train.threads=1")


@pytest.fixture(autouse=True)
def _give_back_random_states():
    with GlobalRandom():
        yield


def _args(tmp_path, run, *extra):
    return [*SETTINGS, f"run={run}", f"checkpoint_dir={tmp_path / 'ckpt'}",
            f"log_dir={tmp_path / 'runs'}", *extra]


def _settings(tmp_path, run, *extra):
    return settings_of(_cfg(tmp_path, run, *extra))


def _cfg(tmp_path, run, *extra):
    return config("train", *_args(tmp_path, run, *extra))


def _same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def _copy(model) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_the_update_is_the_textbook_average():
    torch.manual_seed(0)
    model = PolicyValueNet([64, 32], 1)
    average = average_of(model)
    assert _same(_copy(average), _copy(model))
    assert not any(p.requires_grad for p in average.parameters())
    decay = 0.7
    slow = {k: v.double() for k, v in _copy(model).items()}
    for _ in range(5):
        with torch.no_grad():  # a new set of weights, as an optimiser step would leave
            for p in model.parameters():
                p.add_(torch.randn_like(p))
        update_average(average, model, decay)
        for name, w in model.state_dict().items():
            slow[name] = decay * slow[name] + (1 - decay) * w.double()
    got = average.state_dict()
    assert all(torch.allclose(got[k].double(), slow[k], atol=1e-6) for k in slow)
    assert not any(torch.allclose(got[k], model.state_dict()[k]) for k in slow
                   if k.endswith("weight"))


def test_the_run_averages_after_every_optimiser_step(tmp_path, monkeypatch):
    """The checkpoint's average equals one recomputed from the weights after each step,
    started from the untrained network; the live weights are those of a run without it."""
    seen = []
    step = loop.train_step

    def recording(model, *args, **kwargs):
        metrics = step(model, *args, **kwargs)
        seen.append({k: v.double() for k, v in _copy(model).items()})
        return metrics

    monkeypatch.setattr(loop, "train_step", recording)
    run_training(_settings(tmp_path, "avg", "train.max_batches=2", "train.ema=0.8"))
    start = {k: v.double() for k, v in load_checkpoint(
        tmp_path / "ckpt" / "avg" / "ckpt_0000000.pt")["model"].items()}
    assert len(seen) > 2
    slow = start
    for weights in seen:
        slow = {k: 0.8 * slow[k] + 0.2 * weights[k] for k in slow}
    end = load_checkpoint(tmp_path / "ckpt" / "avg" / "latest.pt")
    assert all(torch.allclose(end["ema"][k].double(), slow[k], atol=1e-6) for k in slow)
    assert _same({k: v.double() for k, v in end["model"].items()}, seen[-1])
    monkeypatch.undo()
    plain = run_training(_settings(tmp_path, "plain", "train.max_batches=2"))
    assert _same(end["model"], _copy(plain.model)), "averaging changed what was trained"


def test_off_writes_what_it_wrote_before(tmp_path):
    """train.ema=0 (the default): no average anywhere, the checkpoint as before the setting."""
    run = run_training(_settings(tmp_path, "off", "train.max_batches=1"))
    assert run.ema is None and run.network is run.model
    payload = load_checkpoint(tmp_path / "ckpt" / "off" / "latest.pt")
    assert "ema" not in payload


def test_evaluation_and_saved_networks_are_the_average(tmp_path, monkeypatch):
    evaluated = []
    match = loop.duplicate_match

    def recording(a, b, *args, agent_kwargs, **kwargs):  # the network the raw player is given
        if b == "greed":  # one of the evaluation's two matches
            evaluated.append(_copy(agent_kwargs["raw"]["model"]))
        return match(a, b, *args, agent_kwargs=agent_kwargs, **kwargs)

    monkeypatch.setattr(loop, "duplicate_match", recording)
    run = run_training(_settings(tmp_path, "ev", "train.max_batches=2", "train.ema=0.5",
                            "train.eval_every=2", "train.eval_deals=1", "train.eval_raw_deals=1",
                            "train.milestone_games=[4]"))
    folder = tmp_path / "ckpt" / "ev"
    latest = load_checkpoint(folder / "latest.pt")
    assert not _same(latest["ema"], latest["model"])
    assert len(evaluated) == 2  # steps 0 and 2
    assert _same(evaluated[-1], latest["ema"]) and _same(latest["ema"], _copy(run.ema))
    for name in ("games_4.pt", "latest.pt"):  # what load_model (evaluate.py, play.py) reads
        assert _same(_copy(load_model(folder / name)), latest["ema"])
        assert _same(_copy(load_model(folder / name, averaged=False)), latest["model"])


def test_a_killed_run_resumes_to_the_uninterrupted_average(tmp_path):
    args = ("train.ema=0.9", "train.passes=2")
    latest = tmp_path / "ckpt" / "killed" / "latest.pt"
    kill_after_checkpoint(_args(tmp_path, "killed", "train.max_batches=100000", *args), latest,
                          max_delay=3.0)
    end = load_checkpoint(latest)["step"] + 2
    run_training(_settings(tmp_path, "killed", f"train.max_batches={end}", *args, "resume=true"))
    run_training(_settings(tmp_path, "whole", f"train.max_batches={end}", *args))
    a = load_checkpoint(latest)
    b = load_checkpoint(tmp_path / "ckpt" / "whole" / "latest.pt")
    assert a["step"] == b["step"] == end
    assert _same(a["model"], b["model"]) and _same(a["ema"], b["ema"])


def test_the_state_file_carries_the_average_and_an_older_one_starts_it(tmp_path):
    state = tmp_path / "state.pt"
    run_training(_settings(tmp_path, "a", "train.max_batches=1", "train.ema=0.9",
                      f"train.state_file={state}", "train.state_weights=float16"))
    stored = load_checkpoint(state)
    assert all(t.dtype == torch.float16 for t in stored["ema"].values() if t.is_floating_point())
    settings = _settings(tmp_path, "b", "train.ema=0.9", f"resume_from={state}")
    run = Run(settings, torch.device("cpu"))
    run.restore(settings, load_checkpoint(state))
    assert _same(_copy(run.ema), {k: v.float() for k, v in stored["ema"].items()})
    assert not _same(_copy(run.ema), _copy(run.model))
    # A state file written before the setting (no average): the average starts at its weights.
    old = tmp_path / "old.pt"
    run_training(_settings(tmp_path, "c", "train.max_batches=1", f"train.state_file={old}"))
    payload = torch.load(old, weights_only=True)
    assert "ema" not in payload
    for settings in (payload["config"], payload["run"]["settings"]):
        settings["train"].pop("ema", None)  # as the code before the setting wrote it (one dict)
    torch.save(payload, old)
    cont = run_training(_settings(tmp_path, "d", "train.max_batches=2", "train.ema=0.9",
                             f"resume_from={old}"))
    assert cont.step == 2 and cont.ema is not None
    # Turning it off on resume drops it.
    off = run_training(_settings(tmp_path, "e", "train.max_batches=2", f"resume_from={state}",
                            "resume_overrides=[train.ema]"))
    assert off.ema is None and "ema" not in load_checkpoint(tmp_path / "ckpt" / "e" / "latest.pt")


def test_a_grown_network_starts_its_average_anew(tmp_path):
    schedule = "train.schedule=[{from_games:4,hidden:[96,32],num_blocks:2}]"
    settings = _settings(tmp_path, "g", "train.ema=0.9", schedule)
    run = Run(settings, torch.device("cpu"))
    run.advance_phase(settings)
    with torch.no_grad():  # an average away from the weights, as after training
        for p in run.ema.parameters():
            p.add_(1.0)
    run.games = 4
    assert run.advance_phase(settings)
    assert run.model.config()["hidden"] == [96, 32] and run.model.num_blocks == 2
    assert run.ema is not run.model and _same(_copy(run.ema), _copy(run.model))
    assert not any(p.requires_grad for p in run.ema.parameters())


@pytest.mark.parametrize("value, message", [
    ("-0.1", "train.ema=-0.1: must be greater than or equal to 0"),
    ("1", "train.ema=1.0: must be less than 1"),
    ("1.5", "train.ema=1.5: must be less than 1"),
    ("nan", "train.ema=nan: must be a finite number"),
])
def test_bad_decays_are_named(value, message, tmp_path, capsys, monkeypatch):
    cfg = _cfg(tmp_path, "bad", f"train.ema={value}")
    with pytest.raises(ValueError) as err:
        check_train(OmegaConf.to_object(cfg))
    assert str(err.value).startswith(message)
    # train.py makes that check before any work, and ends on it in one line
    assert refused(entry.train, cfg, capsys, monkeypatch).startswith(f"error: {message}")
    assert not (tmp_path / "ckpt" / "bad").exists()


def test_a_decay_that_is_not_a_number_is_named(tmp_path):
    with pytest.raises(Exception, match=r"train\.ema"):
        _cfg(tmp_path, "bad", "train.ema=often")
