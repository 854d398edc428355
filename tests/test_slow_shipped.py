"""The shipped network's recorded 1024-deal evaluation is reproduced exactly (marked slow).

Invariants: `python evaluate.py --wpg player=raw raw.sampling.method=uniform
checkpoint=models/scrofazero.pt deals=1024` with the recorded seed gives, deal by deal, the
values recorded in docs/figures/shipped_raw_1024.json (the model card's +28.4 (4.5)), and so
the same WPG and standard error: the evaluation is deterministic and neither the network file,
the rules, Mr. Greed, the sampler nor the raw player has changed what it plays. About 2-5
minutes on 2 cores.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIGURE = ROOT / "docs" / "figures" / "shipped_raw_1024.json"
WORKERS = 2


def _command(recorded: dict, out: Path) -> list[str]:
    """The evaluate.py command line of the recorded measurement, writing to `out`."""
    return [sys.executable, str(ROOT / "evaluate.py"), "--wpg", f"player={recorded['player']}",
            f"checkpoint={recorded['checkpoint']}", f"deals={recorded['deals']}",
            f"seed={recorded['seed']}", f"workers={WORKERS}", "progress=false", f"out={out}",
            # the recorded run's deals (the raw default is belief since)
            "raw.sampling.method=uniform"]


@pytest.mark.slow
def test_shipped_raw_network_reproduces_its_recorded_1024_deals(tmp_path):
    recorded = json.loads(FIGURE.read_text())
    assert (recorded["player"], recorded["checkpoint"], recorded["deals"]) == (
        "raw", "models/scrofazero.pt", 1024)
    assert len(recorded["values"]) == recorded["deals"]  # per-deal values to compare with
    out = tmp_path / "raw_1024.json"
    proc = subprocess.run(_command(recorded, out), cwd=ROOT, capture_output=True, text=True,
                          timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["deals"] == recorded["deals"] and result["seed"] == recorded["seed"]
    differ = [i for i, (a, b) in enumerate(zip(result["values"], recorded["values"])) if a != b]
    assert not differ, f"{len(differ)} deals differ from the record, first: deal {differ[0]}"
    assert result["values"] == recorded["values"]
    assert result["wpg"] == pytest.approx(recorded["wpg"], abs=1e-9)
    assert result["stderr"] == pytest.approx(recorded["stderr"], abs=1e-9)
