"""A run writes its resolved config to tensorboard (text `config`, as YAML) each time it starts,
fresh or resumed, at the step it starts from: it reads back as the config the run ran with, and
the resumed run's tensorboard, rewound to its checkpoint, keeps the first start's."""

import pytest
import yaml
from composed import config, settings_of
from omegaconf import OmegaConf
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from scrofazero.train.loop import CONFIG_TAG, run_training

SETTINGS = ("experiment=smoke", "train.games_per_batch=2", "train.eval_every=0",
            "train.threads=1")
# a resume in-process sets the global random states to its checkpoint's: given back after
pytestmark = pytest.mark.usefixtures("global_random_states")


def _logged_configs(log_dir) -> list[tuple[int, str]]:
    """(step, text) of every `config` text in the tensorboard files of `log_dir`."""
    tag = f"{CONFIG_TAG}/text_summary"  # the name torch's SummaryWriter.add_text gives it
    found = []
    for events in sorted(log_dir.glob("events.out.tfevents.*")):
        acc = EventAccumulator(str(events), size_guidance={"tensors": 0})
        acc.Reload()
        if tag in acc.Tags()["tensors"]:
            found += [(e.step, e.tensor_proto.string_val[0].decode()) for e in acc.Tensors(tag)]
    return sorted(found)


def _settings(text: str) -> dict:
    """The settings of a logged config text (a YAML block of markdown)."""
    assert text.startswith("```yaml\n") and text.endswith("```"), text[:40]
    return yaml.safe_load(text[len("```yaml\n"):-len("```")])


def test_the_resolved_config_is_logged_at_every_start(tmp_path):
    args = [*SETTINGS, "run=c", f"checkpoint_dir={tmp_path / 'ckpt'}",
            f"log_dir={tmp_path / 'runs'}"]
    fresh = config("train", *args, "train.max_batches=1")
    run_training(settings_of(fresh))
    resumed = config("train", *args, "train.max_batches=2", "resume=true")
    run_training(settings_of(resumed))
    logged = _logged_configs(tmp_path / "runs" / "c")
    assert [step for step, _ in logged] == [0, 1]
    assert _settings(logged[0][1]) == OmegaConf.to_container(fresh, resolve=True)
    assert _settings(logged[1][1]) == OmegaConf.to_container(resumed, resolve=True)
    assert _settings(logged[1][1])["resume"] is True
