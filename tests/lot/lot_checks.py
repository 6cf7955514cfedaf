"""Checks every LOT output must pass (issue 2, "What must hold"), written from the definitions."""

from __future__ import annotations

import glob
import json
import os
import re

import jieba
import pandas as pd
from conftest import check_rejects


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def read_table(path) -> pd.DataFrame:
    files = sorted(glob.glob(f"{path}/*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def check_lot_output(out, sources: dict[str, str]) -> dict[str, pd.DataFrame]:
    """Assert the issue's invariants; `sources` maps story_id -> input story text."""
    tables = {t: read_table(f"{out}/{t}") for t in ("clozet", "senpos", "plotcom", "outgen")}
    for task, df in tables.items():
        assert df.example_id.is_unique, task
        assert set(df.split) <= {"train", "val", "test"}
    every = pd.concat([df[["story_id", "split"]] for df in tables.values()], ignore_index=True)
    assert (every.groupby("story_id").split.nunique() <= 1).all(), "a story in two splits across tasks"
    for row in tables["senpos"].itertuples():
        parts = row.story.split("[MASK]")
        assert len(parts) - 1 == row.n_candidates and 1 <= row.label <= row.n_candidates
        window = squash("".join(parts[: row.label]) + row.sentence + "".join(parts[row.label :]))
        assert window in squash(sources[row.story_id]), row.example_id  # a window of the text
        assert len(row.sentence) >= 10
        assert not window.startswith(squash(row.sentence)) and not window.endswith(squash(row.sentence))
    for row in tables["plotcom"].itertuples():
        assert row.story.count("<MASK>") == 1
        assert squash(row.story.replace("<MASK>", row.plot)) == squash(sources[row.story_id])
    for row in tables["clozet"].itertuples():
        right = row.plot0 if row.label == "0" else row.plot1
        assert squash(row.story.replace("<mask>", right)) == squash(sources[row.story_id])
        assert not squash(sources[row.story_id]).startswith(squash(right))
    for row in tables["outgen"].itertuples():
        phrases = list(row.outline)
        assert 1 <= len(phrases) <= 8 and len(set(phrases)) == len(phrases)
        for phrase in phrases:
            assert phrase in row.story
            assert len([w for w in jieba.lcut(phrase) if w.strip()]) <= 8
        assert squash(row.story) == squash(sources[row.story_id])
    plotcom_train = set(tables["plotcom"].query("split == 'train'").story_id)
    assert not plotcom_train & set(tables["clozet"].story_id)
    return tables


def _lines(path) -> list[str]:
    text = open(path, encoding="utf-8").read()
    return text.split("\n") if text else []


def check_jsonl_exports(out, tables: dict[str, pd.DataFrame]) -> None:
    """`<task>/<group>.jsonl` hold LongLM's fields, one record per table row of the group (a
    split; SenPos val/test rows not reviewed go to `<split>.unreviewed`); ClozeT, SenPos and
    OutGen also have `<group>.source`/`.target` with one line per record, no newline at the end."""
    fields = {
        "clozet": ["story", "plot0", "plot1", "label"],
        "senpos": ["story", "sentence", "label"],
        "plotcom": ["story", "plot"],
        "outgen": ["title", "outline", "story"],
    }
    for task, df in tables.items():
        groups = ["train", "val", "test"] + (["val.unreviewed", "test.unreviewed"] if task == "senpos" else [])
        for group in groups:
            split, _, status = group.partition(".")
            rows = df[df.split == split]
            if task == "senpos" and split != "train":
                rows = rows[rows.reviewed == (status != "unreviewed")]
            rows = rows.sort_values("example_id")
            with open(f"{out}/{task}/{group}.jsonl", encoding="utf-8") as f:
                records = [json.loads(line) for line in f]
            assert len(records) == len(rows), (task, group)
            for rec, row in zip(records, rows.itertuples()):
                assert list(rec) == fields[task]
                assert rec["story"] == row.story
                if task == "clozet":
                    assert rec["label"] in ("0", "1")
                if task == "senpos":
                    assert isinstance(rec["label"], int)
            if task == "plotcom":
                continue
            sources, targets = _lines(f"{out}/{task}/{group}.source"), _lines(f"{out}/{task}/{group}.target")
            assert len(sources) == len(targets) == len(rows), (task, group)
            for source, target, row in zip(sources, targets, rows.itertuples()):
                assert target.startswith(source) or task == "outgen"
                if task == "outgen":
                    assert source.split("#")[0] == row.title and source.endswith("<extra_id_1>")
                    assert target == "<extra_id_1>" + row.story
                else:
                    answer = int(row.label) + 1 if task == "clozet" else int(row.label)
                    assert target == source + f"<extra_id_{answer}>" and source.endswith("<mask>")
    senpos = tables["senpos"]
    assert not len(senpos[(senpos.split != "train") & ~senpos.reviewed]) or os.path.getsize(
        f"{out}/senpos/val.unreviewed.jsonl"
    ) + os.path.getsize(f"{out}/senpos/test.unreviewed.jsonl")


def check_accounting(out) -> dict:
    with open(f"{out}/stats.json", encoding="utf-8") as f:
        stats = json.load(f)
    assert stats["balanced"]
    for name, stage in stats["stages"].items():
        assert stage["read"] == stage["written"] + stage["rejected"], name
    check_rejects(out)
    rejects = read_table(f"{out}/rejects")
    assert len(rejects) == sum(s["rejected"] for s in stats["stages"].values())
    return stats
