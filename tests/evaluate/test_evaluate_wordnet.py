"""ROUGE-1.5.5's WordNet exception db as an explicit choice (issue 30): `--rouge-wordnet empty`
(files2rouge's shipped db, the default and today's numbers) or `rebuilt` from exception lists
on this machine, named in stats.json and the card."""

from __future__ import annotations

import json
import pathlib
import zipfile

import pyarrow.parquet as pq
import pytest

from annotators.evaluate import rouge155, wordnet_exc
from pipelines import evaluate

# A few lines in the layout of WordNet's exception lists (inflected form, base form(s)).
NOUN = "children child\nmice mouse\ngeese goose\nmen man\nbetter better\n"
VERB = "went go\nran run\nbetter well\n"
ADJ = "better good well\nbest good\n\nlonely\n"


def write_lists(folder: pathlib.Path) -> pathlib.Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("noun.exc", NOUN), ("verb.exc", VERB), ("adj.exc", ADJ), ("README", "not a list\n")):
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def no_installed_lists(tmp_path, monkeypatch):
    """A machine with no ROUGE, files2rouge, pyrouge or NLTK copy of the lists."""
    import nltk.data

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ROUGE_EVAL_HOME", raising=False)
    monkeypatch.setattr(nltk.data, "path", [str(tmp_path / "nltk_data")])
    return tmp_path


def test_lists_are_read_as_buildExeptionDB_reads_them(tmp_path):
    lists = wordnet_exc.read_lists(write_lists(tmp_path / "exc"))
    assert [pathlib.Path(n).name for n, _ in lists] == ["adj.exc", "noun.exc", "verb.exc"]  # name order, .exc only
    db = wordnet_exc.parse_exceptions(lists)
    # first base form only; a later file overwrites a key; lines without a base are skipped
    assert db["best"] == "good" and db["better"] == "well" and "lonely" not in db
    assert len(db) == 8
    assert wordnet_exc.read_lists(tmp_path / "exc" / "noun.exc")[0][1] == NOUN
    assert wordnet_exc.read_lists(tmp_path / "missing") == []


def test_tokens_take_the_base_form_before_stemming():
    db = {"children": "child", "mice": "mouse", "men": "man", "running": "runningbase"}
    assert rouge155.tokens("the children saw mice") == ["the", "children", "saw", "mice"]
    assert rouge155.tokens("the children saw mice", exceptions=db) == ["the", "child", "saw", "mouse"]
    # only tokens over 3 characters are looked up (MorphStem), and the base form is not stemmed
    assert rouge155.tokens("men running", exceptions=db) == ["men", "runningbase"]
    assert rouge155.tokens("children", stem=False, exceptions=db) == ["children"]
    peer, model = ["the children played ."], ["a child played ."]
    assert rouge155.document_scores(peer, model)["rouge-l"][:2] == (0.33333, 0.33333)  # "play" of 3
    assert rouge155.document_scores(peer, model, exceptions=db)["rouge-l"][:2] == (0.66667, 0.66667)


def test_installed_lists_are_found_in_order(no_installed_lists):
    tmp = no_installed_lists
    assert wordnet_exc.find_sources() is None
    assert "none found" in wordnet_exc.problem("rebuilt") and wordnet_exc.problem("empty") is None
    # NLTK's wordnet corpus (a zip holding wordnet/*.exc)
    corpora = tmp / "nltk_data" / "corpora"
    corpora.mkdir(parents=True)
    with zipfile.ZipFile(corpora / "wordnet.zip", "w") as z:
        z.writestr("wordnet/verb.exc", VERB)
        z.writestr("wordnet/noun.exc", NOUN)
        z.writestr("wordnet/data.noun", "not a list")
    where, lists = wordnet_exc.find_sources()
    assert where.startswith("NLTK wordnet corpus") and [n.rsplit("/", 1)[-1] for n, _ in lists] == [
        "noun.exc",
        "verb.exc",
    ]
    # pyrouge's, then files2rouge's, then $ROUGE_EVAL_HOME's copy come first
    home = tmp / "home"
    (home / ".pyrouge").mkdir(parents=True)
    (home / ".pyrouge" / "settings.ini").write_text(f"[pyrouge settings]\nhome_dir = {tmp / 'pyrouge'}\n")
    write_lists(tmp / "pyrouge" / "data" / wordnet_exc.FOLDER)
    assert wordnet_exc.find_sources()[0].startswith("pyrouge")
    write_lists(home / ".files2rouge" / "data" / wordnet_exc.FOLDER)
    assert wordnet_exc.find_sources()[0].startswith("files2rouge")
    # a path the user names is the only place looked at
    assert wordnet_exc.find_sources(str(tmp / "nowhere")) is None
    assert "no WordNet exception list" in wordnet_exc.problem("rebuilt", str(tmp / "nowhere"))
    db = wordnet_exc.load("rebuilt", str(tmp / "pyrouge" / "data" / wordnet_exc.FOLDER))
    assert db.describe()["keys"] == 8 and db.describe()["source"].startswith("--rouge-wordnet-exc")
    assert wordnet_exc.load("empty").describe()["keys"] == 0


PRED = ["the children went home .", "two mice ran away .", "the geese flew south ."]
GOLD = ["a child goes home .", "a mouse runs away .", "a goose flies south ."]


def _run(tmp_path, name: str, *flags: str) -> pathlib.Path:
    pred, gold = tmp_path / "pred.txt", tmp_path / "test.tgt"
    pred.write_text("\n".join(PRED) + "\n", encoding="utf-8")
    gold.write_text("\n".join(GOLD) + "\n", encoding="utf-8")
    out = tmp_path / name
    assert (
        evaluate.run(["--task", "xsum", "--predictions", str(pred), "--gold", str(gold), "--output", str(out), *flags])
        == 0
    )
    return out


def _table_bytes(out: pathlib.Path) -> dict[str, bytes]:
    return {f"{t}/{f.name}": f.read_bytes() for t in ("metrics", "scores") for f in sorted((out / t).glob("*.parquet"))}


def _metrics(out: pathlib.Path) -> dict[str, float]:
    return {r["metric"]: r["value"] for r in pq.read_table(out / "metrics").to_pylist()}


@pytest.mark.slow
def test_the_two_dbs_give_different_numbers_and_the_default_is_the_empty_one(tmp_path, no_installed_lists):
    default = _run(tmp_path, "default")
    empty = _run(tmp_path, "empty", "--rouge-wordnet", "empty")
    lists = write_lists(tmp_path / "exc")
    rebuilt = _run(tmp_path, "rebuilt", "--rouge-wordnet", "rebuilt", "--rouge-wordnet-exc", str(lists))
    assert _table_bytes(default) == _table_bytes(empty)
    # the default is ROUGE-1.5.5 without exceptions, as before the choice existed
    docs = [rouge155.document_scores([p], [g]) for p, g in zip(PRED, GOLD)]
    assert rouge155.bootstrap_averages([[d["rouge-l"][2] for d in docs]])[0] * 100 == pytest.approx(
        _metrics(default)["rouge-l"], abs=1e-9
    )
    assert _metrics(rebuilt)["rouge-l"] > _metrics(default)["rouge-l"]
    assert _metrics(rebuilt)["rouge-1"] > _metrics(default)["rouge-1"]
    stats = {
        name: json.loads((out / "stats.json").read_text())["config"]["rouge_wordnet_db"]
        for name, out in (("default", default), ("rebuilt", rebuilt))
    }
    assert stats["default"]["choice"] == "empty" and stats["default"]["keys"] == 0
    assert stats["rebuilt"]["keys"] == 8 and len(stats["rebuilt"]["files"]) == 3
    assert "WordNet exception db (`--rouge-wordnet`): **empty**" in (default / "CARD.md").read_text()
    assert "**rebuilt**, --rouge-wordnet-exc" in (rebuilt / "CARD.md").read_text()


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--task", "xsum", "--rouge-wordnet", "rebuilt"], "none found"),
        (["--task", "xsum", "--rouge-wordnet-exc", "x.exc"], "for --rouge-wordnet rebuilt"),
        (["--task", "xsum", "--compat", "clean", "--rouge-wordnet", "rebuilt"], "is read by ROUGE-1.5.5"),
        (["--task", "outgen", "--rouge-wordnet", "rebuilt"], "is read by ROUGE-1.5.5"),
    ],
)
def test_a_db_that_cannot_be_used_is_a_usage_error(tmp_path, no_installed_lists, capsys, flags, message):
    gold = tmp_path / "test.tgt"
    gold.write_text("a line .\n", encoding="utf-8")
    with pytest.raises(SystemExit):
        evaluate.run([*flags, "--predictions", str(gold), "--gold", str(gold), "--output", str(tmp_path / "o")])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
