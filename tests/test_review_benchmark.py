"""benchmarks/review_noise.py on one hand with 8 deals and the small network: its counts hang
together (the second judgement only takes mistakes away; a larger minimum calls no more; what
another review confirms is among the mistakes), so the figures in docs/results.md ("The coach")
are what they say."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import review_noise  # noqa: E402


def test_the_review_benchmark_counts_hang_together(tmp_path):
    out = tmp_path / "noise.json"
    review_noise.main(["--hands", "2", "--worlds", "8", "--json", str(out),
                       "--checkpoint", str(ROOT / "models" / "scrofazero_small.pt")])
    data = json.loads(out.read_text())
    first = data["first_judgement_alone"]
    assert data["moves"] == 52 and len(data["rows"]) == 4 and data["settings"]["worlds"] == 8
    assert data["mistakes_count"] <= first["mistakes_count"]
    assert data["mistakes_count"] == sum(r["mistakes"] for r in data["rows"])
    assert first["mistakes_count"] == sum(r["first_judgement_mistakes"] for r in data["rows"])
    assert data["confirmed_by_a_second_review"] <= data["mistakes_count"]
    assert data["mistakes"] == round(data["mistakes_count"] / 52, 4)
    shares = list(first["by_min_loss"].values())
    assert shares == sorted(shares, reverse=True)
    assert first["by_min_loss"]["15"] == first["mistakes"]  # the rule at the default minimum
    assert len(data["mistake_losses"]) == data["mistakes_count"]
    assert all(loss > 15 for loss in data["mistake_losses"])
