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
    assert four["cpu_s"] > 0 and one["cpu_s"] > 0 and rate["jieba_cpu_s"] > 0  # no order: inputs this small are noise
    extra = four["cpu_s"] - one["cpu_s"]
    if extra > 0:
        marginal = (four["reference_chars"] - one["reference_chars"]) / extra
        assert rate["audit_chars_per_cpu_s"] == round(marginal)
        assert rate["audit_vs_jieba"] == pytest.approx(marginal / rate["jieba_chars_per_cpu_s"], rel=1e-2, abs=0.006)
    else:  # the 4-copy run measured no more CPU: no marginal rate, and the table says so
        assert rate["audit_chars_per_cpu_s"] is None and rate["audit_vs_jieba"] is None
    whole = four["reference_chars"] / four["cpu_s"] / rate["jieba_chars_per_cpu_s"]
    assert rate["whole_run_4x_vs_jieba"] == pytest.approx(whole, abs=0.006)  # rounded to 2 places
    assert not any((tmp_path / "work").glob("contaminated_*"))  # the audits' outputs are removed
    table = parallel_markdown(
        {"workers": {}, "growth": {}, "overlap_reference_contaminated": rate, "dedup_80k_distinct": {}}
    )
    shown = "n/a" if rate["audit_chars_per_cpu_s"] is None else f"{rate['audit_chars_per_cpu_s']:,}"
    ratio = "n/a" if rate["audit_vs_jieba"] is None else f"x{rate['audit_vs_jieba']}"
    assert f"| {one['cpu_s']} | {four['cpu_s']} | {shown} | {rate['jieba_chars_per_cpu_s']:,} | {ratio} |" in table


def test_plain_ceiling_cuts_every_story_in_each_mode(tmp_path):
    import json
    import subprocess
    import sys

    from bench.parallel import BASELINES, plain_ceiling

    stories = tmp_path / "stories.jsonl"
    texts = [
        "小明在河边走了很久，突然看见了一只受伤的小鸟。",
        "第二天，老奶奶又来到了村口的大树下。",
        "大家都高兴地笑了起来。",
    ]
    stories.write_text("".join(json.dumps({"story": t}, ensure_ascii=False) + "\n" for t in texts), encoding="utf-8")
    script = str(BASELINES / "plain_jieba_processes.py")
    outs = [
        json.loads(
            subprocess.run([sys.executable, script, str(stories), n], capture_output=True, text=True, check=True).stdout
        )
        for n in ("1", "2")
    ]
    assert outs[0] == outs[1] and outs[0]["stories"] == 3 and outs[0]["tokens"] > 10
    row = plain_ceiling(stories, reps=1)
    assert set(row) >= {"one_process", "every_core", "speedup_wall", "speedup_wall_per_pair"}
    assert row["speedup_wall_per_pair"] == [row["speedup_wall"]]
    table = parallel_markdown({"workers": {}, "ceiling": row, "growth": {}, "dedup_80k_distinct": {}})
    assert f"x{row['speedup_wall']}" in table and "plain `jieba.lcut` script" in table
