"""End-to-end runs of `pipelines.edits` on the fixture edit lines (shared per module)."""

from __future__ import annotations

import json
import pathlib

import pandas as pd
import pytest
import spacy
from conftest import check_rejects
from test_edits_metric import ref_rouge_l, ref_user

from pipelines import edits

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

FIXTURES = pathlib.Path(__file__).parents[1] / "fixtures" / "storium" / "edits"
GLOB = str(FIXTURES / "*.jsonl")


def good_lines() -> dict[str, dict]:
    """The first valid line per id, read independently of the job."""
    rows = {}
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if (
                isinstance(row, dict)
                and isinstance(row.get("id"), str)
                and isinstance(row.get("generated"), str)
                and isinstance(row.get("published"), str)
                and row["id"] not in rows
            ):
                rows[row["id"]] = row
    return rows


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    path = tmp_path_factory.mktemp("edits") / "out"
    edits.run(["--edits", GLOB, "--output", str(path)])
    return path


@pytest.fixture(scope="module")
def tagged(tmp_path_factory):
    """A real spaCy pipeline on disk (rule-based tagger and entity ruler), run multi-process."""
    base = tmp_path_factory.mktemp("edits_spacy")
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    ruler.add([[{"IS_ALPHA": True}]], {"POS": "NOUN"})
    ruler.add([[{"LOWER": {"IN": ["mara", "tobin", "idris", "bir", "hamid"]}}]], {"POS": "PROPN"})
    ruler.add([[{"LOWER": {"IN": ["the", "a", "and", "to", "into"]}}]], {"POS": "DET"})
    ents = nlp.add_pipe("entity_ruler")
    ents.add_patterns(
        [
            {"label": "PERSON", "pattern": "Mara"},
            {"label": "PERSON", "pattern": "Tobin"},
            {"label": "GPE", "pattern": "Bir Hamid"},
        ]
    )
    nlp.to_disk(base / "model")
    edits.run(
        [
            "--edits",
            GLOB,
            "--output",
            str(base / "out"),
            "--spacy-model",
            str(base / "model"),
            "--direct_running_mode=multi_processing",
            "--direct_num_workers=2",
        ]
    )
    return base / "out"


def test_scores_equal_the_independent_definition(out):
    table = pd.read_parquet(out / "edits").set_index("id")
    lines = good_lines()
    assert sorted(table.index) == sorted(lines)
    for edit_id, line in lines.items():
        row = table.loc[edit_id]
        user = ref_user(line["generated"], line["published"])
        rouge = ref_rouge_l(line["generated"], line["published"])
        assert (row.user_precision, row.user_recall, row.user_f1) == pytest.approx(user, abs=1e-12)
        assert (row.rouge_l_precision, row.rouge_l_recall, row.rouge_l_f1) == pytest.approx(rouge, abs=1e-12)
    assert table.loc["e1", "story_id"] == "game-lighthouse" and table.loc["e3", "user_precision"] == 1.0


def test_summary_means(out):
    table = pd.read_parquet(out / "edits")
    summary = pd.read_parquet(out / "summary").set_index("model")
    assert list(summary.index) == ["*", "nucleus", "top-k"]
    for metric in ("user_precision", "user_f1", "rouge_l_recall"):
        assert summary.loc["*", metric] == pytest.approx(table[metric].mean())
        assert summary.loc["top-k", metric] == pytest.approx(table[table.model == "top-k"][metric].mean())
    assert summary.loc["*", "kept_token_share"] == pytest.approx(
        table.matched_tokens.sum() / table.n_generated_tokens.sum()
    )


def test_rejects_and_accounting(out):
    stats = json.loads((out / "stats.json").read_text())
    assert stats["balanced"]
    assert stats["stages"]["edits"]["rejected_by_reason"] == {
        "blank_line": 1,
        "bad_field_type": 1,
        "missing_field": 1,
        "not_an_object": 1,
        "malformed_json": 1,
    }
    check_rejects(out)
    rejects = pd.read_parquet(out / "rejects")
    dup = rejects[rejects.reason == "duplicate_id"].iloc[0]
    assert dup.input_id == "edits_a.jsonl:7" and "edits_a.jsonl:1" in dup.detail


def test_without_spacy_model_the_card_says_so_and_skips_only_that_table(out):
    card = (out / "CARD.md").read_text()
    assert "Skipped: no --spacy-model given" in card
    assert "autojunk=False" in card and "outside a-z and 0-9" in card
    assert not (out / "preserved_pos").exists() and (out / "summary").exists()


def test_missing_spacy_model_is_named(tmp_path):
    edits.run(
        [
            "--edits",
            str(FIXTURES / "edits_b.jsonl"),
            "--output",
            str(tmp_path),
            "--spacy-model",
            "en_core_web_sm_not_installed",
            "--storium-compat",
        ]
    )
    card = (tmp_path / "CARD.md").read_text()
    assert "'en_core_web_sm_not_installed' is not installed" in card
    long = pd.read_parquet(tmp_path / "edits").set_index("id").loc["long-1"]
    line = next(json.loads(x) for x in (FIXTURES / "edits_b.jsonl").read_text().splitlines() if "long-1" in x)
    assert long.user_precision == pytest.approx(ref_user(line["generated"], line["published"], autojunk=True)[0])


def test_preserved_text_by_part_of_speech(tagged, out):
    pos = pd.read_parquet(tagged / "preserved_pos").set_index("pos")
    assert (pos.generated == pos.kept + pos.deleted).all()
    # e3 is kept whole (idris, bir, hamid); e1 keeps "mara ties the rope ..." and "tobin laughs"
    assert (pos.loc["PROPN", "generated"], pos.loc["PROPN", "kept"]) == (5, 5)
    assert set(pos.index) == {"DET", "NOUN", "PROPN"}
    assert 0 < pos.loc["DET", "kept"] < pos.loc["DET", "generated"]
    assert pos.kept.sum() <= pd.read_parquet(out / "edits").matched_tokens.sum()
    stats = json.loads((tagged / "stats.json").read_text())
    assert stats["balanced"] and stats["preserved"]["edits"] == 7
    # entities: Mara and Tobin (kept, characters of e1), Bir Hamid (kept, e3 lists no characters)
    assert {
        k: stats["preserved"][k] for k in ("entities_generated", "entities_kept", "entities_kept_in_characters")
    } == {"entities_generated": 3, "entities_kept": 3, "entities_kept_in_characters": 2}
    assert "kept and naming a character: 2" in (tagged / "CARD.md").read_text()
    for name in ("edits", "summary"):
        assert (tagged / name / "part-00000-of-00001.parquet").read_bytes() == (
            out / name / "part-00000-of-00001.parquet"
        ).read_bytes()


def test_output_folder_is_a_hugging_face_dataset_card(out):
    """README.md's YAML configs load with datasets.load_dataset, splits and row counts as written."""
    from conftest import check_dataset_card

    assert check_dataset_card(out)


def test_card_gives_the_metric_means_of_the_summary_table(out):
    summary = pd.read_parquet(out / "summary")
    card = (out / "CARD.md").read_text(encoding="utf-8")
    assert "## Metric means" in card and len(summary) > 0
    for row in summary.itertuples():
        assert f"| {row.model} | {row.n_edits} | {row.kept_token_share:.4f} | {row.user_precision:.4f} |" in card
        assert f"{row.rouge_l_f1:.4f} |" in card
    assert "seed: none" in card
