"""The learned Fish player's scorer file (fish/players/scorer.py `load_scorer`): a file whose
weights hold a NaN or an infinity is refused with one line naming the file and the tensor; the
same file with finite weights loads."""

import re

import pytest
import torch

from scrofazero.fish.players.scorer import Scorer, load_scorer, model_payload


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_scorer_weights_are_refused(tmp_path, value):
    payload = model_payload(Scorer())
    torch.save(payload, tmp_path / "good.pt")
    assert isinstance(load_scorer(tmp_path / "good.pt"), Scorer)
    name = next(k for k, v in payload["model"].items() if v.dim() == 2)
    payload["model"][name] = payload["model"][name].clone()
    payload["model"][name][0, 0] = value
    torch.save(payload, tmp_path / "diverged.pt")
    message = rf"diverged\.pt: non-finite weights in {re.escape(name)}"
    with pytest.raises(ValueError, match=message) as err:
        load_scorer(tmp_path / "diverged.pt")
    assert "\n" not in str(err.value)
