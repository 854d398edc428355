"""The evaluation during training (train/loop.py evaluate) with one worker builds the raw player
from the network in this process and writes no file; with more workers they load it from a
model-only file. Both give the same result on the same deals."""

import dataclasses

import torch
from composed import config, settings_of

from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.train import loop
from scrofazero.train.state import Run

TIMING = ("eval_seconds", "train_minutes")


def test_one_worker_evaluates_in_memory_as_the_file_does(tmp_path, monkeypatch):
    cfg = config("train", "experiment=smoke", "run=e", f"checkpoint_dir={tmp_path / 'ckpt'}",
                 "train.eval_raw_deals=2", "train.eval_workers=1", "seed=3")
    settings = settings_of(cfg)
    run = Run(settings, torch.device("cpu"))
    run.dir.mkdir(parents=True)
    deals = load_deals(limit=3)
    written = []
    save = loop.save_model_file

    def saved(path, *args, **kwargs):
        written.append(path)
        return save(path, *args, **kwargs)

    monkeypatch.setattr(loop, "save_model_file", saved)
    in_memory = loop.evaluate(run, settings.train, deals)
    assert written == [] and not any(run.dir.iterdir())
    from_file = loop.evaluate(run, dataclasses.replace(settings.train, eval_workers=2), deals)
    assert [p.name for p in written] == ["eval_model.pt"] and not written[0].exists()
    assert {k: v for k, v in in_memory.items() if k not in TIMING} == \
        {k: v for k, v in from_file.items() if k not in TIMING}
    assert in_memory["deals"] == 3
