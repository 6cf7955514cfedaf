"""Unit tests of the preserved-text analysis on hand-built spaCy Docs (no model needed)."""

from __future__ import annotations

import spacy
from spacy.tokens import Doc

from annotators.storium.edits import Edit
from annotators.storium.preserved import analyze_doc, merge_counts, pos_rows, spacy_status, user_token_spans

VOCAB = spacy.blank("en").vocab


def doc(words, pos, ents, spaces=None):
    return Doc(VOCAB, words=words, spaces=spaces, pos=pos, ents=ents)


def test_user_token_spans_follow_the_original_text():
    text = "Mara's rope, TIED."
    assert [text[a:b] for a, b in user_token_spans(text)] == ["Mara", "s", "rope", "TIED"]
    assert user_token_spans("\u0130stanbul") is None  # lower() gives i + a combining dot


def test_kept_and_deleted_by_pos_and_entities():
    generated = "Adira shoots the guard near Berlin"
    edit = Edit("x", generated, "Adira shoots the guard and runs", characters=("Adira Makarova",))
    d = doc(
        generated.split(), ["PROPN", "VERB", "DET", "NOUN", "ADP", "PROPN"], ["B-PERSON", "O", "O", "O", "O", "B-GPE"]
    )
    counts = analyze_doc(edit, d)
    assert counts["pos"] == {"PROPN": [2, 1], "VERB": [1, 1], "DET": [1, 1], "NOUN": [1, 1], "ADP": [1, 0]}
    assert (counts["entities_generated"], counts["entities_kept"], counts["entities_kept_in_characters"]) == (2, 1, 1)


def test_punctuation_tokens_are_not_counted_and_merge_sums():
    generated = "Stop , thief !"
    edit = Edit("y", generated, "Stop, thief!")
    a = analyze_doc(edit, doc(generated.split(), ["VERB", "PUNCT", "NOUN", "PUNCT"], ["O"] * 4))
    assert a["pos"] == {"VERB": [1, 1], "NOUN": [1, 1]}
    total = merge_counts([a, a])
    assert total["pos"]["VERB"] == [2, 2] and total["edits"] == 2
    assert pos_rows(total)[0] == {"pos": "NOUN", "generated": 2, "kept": 2, "deleted": 0, "kept_share": 1.0}


def test_spacy_status_explains_why_analysis_is_skipped(tmp_path):
    assert spacy_status(None) == "no --spacy-model given"
    assert "is not installed" in spacy_status("xx_no_such_pipeline")
    assert "not a spaCy pipeline (no meta.json)" in spacy_status(str(tmp_path))  # spacy.load failed on it
    (tmp_path / "meta.json").write_text("{}")
    assert spacy_status(str(tmp_path)) is None
