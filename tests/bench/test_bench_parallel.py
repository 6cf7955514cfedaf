"""`make bench` part 5's overlap row where every reference document matches: real one-worker
audits and a real plain-jieba child on a small generated test table and references."""

from __future__ import annotations

import pytest

from bench.bench_overlap import make_inputs
from bench.parallel import contaminated_reference_rate, parallel_markdown

pytestmark = pytest.mark.slow  # two audits and a jieba child


def test_contaminated_reference_rate_measures_both_sides(tmp_path):
    inputs = make_inputs(tmp_path / "in", (1, 4), base_lines=300)
    rate = contaminated_reference_rate(tmp_path / "work", inputs["test"], inputs["refs"])
    one, four = rate["runs"][1], rate["runs"][4]
    lines = inputs["refs"][1].read_text(encoding="utf-8").split("\n")
    assert one["reference_chars"] == sum(map(len, lines))  # newlines left out, as jieba's child counts
    assert four["reference_chars"] == 4 * one["reference_chars"]
    assert four["cpu_s"] > one["cpu_s"] > 0 and rate["jieba_cpu_s"] > 0
    marginal = (four["reference_chars"] - one["reference_chars"]) / (four["cpu_s"] - one["cpu_s"])
    assert rate["audit_chars_per_cpu_s"] == round(marginal)
    assert rate["audit_vs_jieba"] == round(marginal / rate["jieba_chars_per_cpu_s"], 2)
    assert not any((tmp_path / "work").glob("contaminated_*"))  # the audits' outputs are removed
    table = parallel_markdown(
        {"workers": {}, "growth": {}, "overlap_reference_contaminated": rate, "dedup_80k_distinct": {}}
    )
    assert f"| {one['cpu_s']} | {four['cpu_s']} | {rate['audit_chars_per_cpu_s']:,} |" in table
