"""Fault tables of every job (issue 28): input, expected exit, expected reject reason,
records accounted.

Usage faults (missing path, glob with no match, empty folder, a folder that is not a
storybench output, a `--lot` that does not exist) end at once with exit 2 and one
`error:` line, never a traceback. Record faults (broken lines, wrong charsets, wrong types,
duplicate ids, broken archives, oversized records, a folder where a file belongs) become
rejects rows with the reason that names them, the good records around them are kept, and
every stage balances: read = written + rejected.
"""

from __future__ import annotations

import bz2
import gzip
import importlib
import json
import pathlib
import shutil
import tempfile

import pandas as pd
import pytest
from conftest import ROOT

from pipelines.engine.textlines import MAX_LINE_BYTES
from pipelines.engine.usage import main

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

FIX = ROOT / "tests" / "fixtures"
JOB_INPUT = {  # job -> (flag of its main input, file extension it reads)
    "lot": ("--stories", ".jsonl"),
    "stories": ("--input", ".jsonl"),
    "storium": ("--games", ".json"),
    "edits": ("--edits", ".jsonl"),
    "chapterbreak": ("--gutenberg", ".txt"),
    "evaluate": ("--predictions", ".jsonl"),
    "overlap": ("--test", ".jsonl"),
}
EXTRA = {  # the other flags each job needs (valid ones: only the fault under test is wrong)
    "evaluate": lambda tmp: ["--task", "outgen", "--gold", str(_gold(tmp))],
    "overlap": lambda tmp: ["--reference", str(ROOT / "samples/lot/stories.jsonl")],
}


def _gold(tmp: pathlib.Path) -> pathlib.Path:
    path = tmp / "gold.jsonl"
    path.write_text(
        json.dumps({"title": "t", "outline": ["小猫"], "story": "小猫在河边钓鱼。"}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    return path


def run_job(job: str, argv: list[str], capsys) -> tuple[int, str]:
    """(exit code, stderr) of `python -m pipelines.<job>` run in this process."""
    module = importlib.import_module(f"pipelines.{job}")
    try:
        main(module.run, job, argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    return code, capsys.readouterr().err


def assert_one_error_line(code: int, err: str, job: str, *words: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and errors[0].startswith(f"python -m pipelines.{job}: error:"), err
    assert all(w in errors[0] for w in words), errors[0]


# ----------------------------------------------------------------------------- usage faults
USAGE_FAULTS = {  # fault -> (the main input's value, words the error line names)
    "missing_path": (lambda tmp, ext: str(tmp / f"nowhere{ext}"), ("no input files match",)),
    "glob_matches_nothing": (lambda tmp, ext: str(tmp / f"*.none{ext}"), ("no input files match",)),
    "empty_folder": (lambda tmp, ext: str(_mkdir(tmp / "empty")), ("files in folder",)),
}


def _mkdir(path: pathlib.Path) -> pathlib.Path:
    path.mkdir(exist_ok=True)
    return path


@pytest.mark.parametrize("fault", sorted(USAGE_FAULTS))
@pytest.mark.parametrize("job", sorted(JOB_INPUT))
def test_missing_or_empty_input_is_one_error_line(job, fault, tmp_path, capsys):
    flag, ext = JOB_INPUT[job]
    value, words = USAGE_FAULTS[fault]
    argv = [flag, value(tmp_path, ext), *EXTRA.get(job, lambda _: [])(tmp_path), "--output", str(tmp_path / "out")]
    code, err = run_job(job, argv, capsys)
    assert_one_error_line(code, err, job, *words)
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.incomplete").exists()


@pytest.mark.parametrize("job,flag", [("bias", "--lot"), ("overlap", "--lot"), ("chapterbreak", "--ao3")])
def test_a_folder_flag_that_does_not_exist_is_one_error_line(job, flag, tmp_path, capsys):
    code, err = run_job(job, [flag, str(tmp_path / "no_such_folder"), "--output", str(tmp_path / "out")], capsys)
    assert_one_error_line(code, err, job, "no_such_folder")


def test_a_lot_folder_without_task_folders_is_one_error_line(tmp_path, capsys):
    code, err = run_job("bias", ["--lot", str(_mkdir(tmp_path / "lot")), "--output", str(tmp_path / "out")], capsys)
    assert_one_error_line(code, err, "bias", "clozet/")


@pytest.mark.parametrize(
    "job,argv",
    [
        ("edits", ["--edits", str(FIX / "storium/edits")]),
        ("storium", ["--games", str(FIX / "storium/g_desert.json")]),
    ],
)
def test_an_output_folder_that_is_not_a_storybench_output_is_refused(job, argv, tmp_path, capsys):
    out = _mkdir(tmp_path / "mine")
    (out / "README.md").write_text("my notes\n")
    code, err = run_job(job, argv + ["--output", str(out)], capsys)
    assert_one_error_line(code, err, job, "no stats.json")
    assert (out / "README.md").read_text() == "my notes\n" and sorted(p.name for p in out.iterdir()) == ["README.md"]


DRY_RUNS = {
    "edits": ["--edits", str(FIX / "storium/edits")],
    "storium": ["--games", str(FIX / "storium/g_*.json")],
    "lot": ["--stories", str(ROOT / "samples/lot/stories.jsonl")],
    "chapterbreak": ["--gutenberg", str(FIX / "chapterbreak/books/*.txt"), "--ao3", str(FIX / "chapterbreak/ao3")],
    "glge": ["--input", str(FIX / "glge")],
    "overlap": [
        "--test",
        str(ROOT / "samples/lot/stories.jsonl"),
        "--reference",
        str(ROOT / "samples/lot/stories.jsonl"),
    ],
}


@pytest.mark.parametrize("job", sorted(DRY_RUNS))
def test_a_dry_run_on_the_local_runner_builds_the_graph_and_runs_nothing(job, tmp_path, capsys):
    out = tmp_path / "out"
    code, err = run_job(job, DRY_RUNS[job] + ["--output", str(out), "--dry_run=True"], capsys)
    assert code == 0 and "nothing was run" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # neither the output nor its staging folder


def test_a_dry_run_leaves_no_folder_behind_in_the_temporary_directory(tmp_path, capsys, monkeypatch):
    """Beam makes an empty folder for every pipeline and removes it when the pipeline runs; a
    dry run runs nothing, so the job removes it (one was left behind per dry run)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    code, err = run_job("lot", DRY_RUNS["lot"] + ["--output", str(tmp_path / "out"), "--dry_run=True"], capsys)
    assert code == 0 and "nothing was run" in err
    assert list(temp.iterdir()) == []


# ----------------------------------------------------------------------------- record faults
def stats(out: pathlib.Path) -> dict:
    data = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert data["balanced"], data["stages"]
    return data


def rejects(out: pathlib.Path) -> pd.DataFrame:
    return pd.read_parquet(out / "rejects")


EDIT_LINES = [  # (line bytes, the reason it gets or None when it is scored)
    (b'{"id": "ok1", "generated": "the cat sat on the mat", "published": "the cat sat"}', None),
    (b'{"id": "ok2", "generated": "a dog ran", "published": "a dog ran far"}', None),
    (b'{"id": "ok1", "generated": "again", "published": "again"}', "duplicate_id"),
    (b'{"id": "bad", "generated": "x"', "malformed_json"),
    (b"[1, 2]", "not_an_object"),
    (b'{"id": "t", "generated": 42, "published": "y"}', "bad_field_type"),
    ('{"id": "gbk", "generated": "他说了一个很长的故事", "published": "故事"}'.encode("gbk"), "encoding"),
    ('{"id": "big5", "generated": "他說了一個很長的故事", "published": "故事"}'.encode("big5"), "encoding"),
    (b"", "blank_line"),
    (b'{"id": "deep", "generated": ' + b"[" * 100_000 + b"}", "malformed_json"),
    (json.dumps({"id": "rep", "generated": "a b " * 2000, "published": "b a c " * 1400}).encode(), "over_size_limit"),
    (b'{"id": "ok3", "generated": "end", "published": "the end"}', None),
    (b'{"id": "empty", "generated": "", "published": ""}', "empty_text"),  # once scored 0/0/0
    (b'{"id": "spaces", "generated": " ", "published": "\\n "}', "empty_text"),
    (b'{"id": "written", "generated": "", "published": "the end"}', None),  # all the writer's: scored
]


def test_edits_fault_table(tmp_path, capsys):
    path = tmp_path / "edits.jsonl"
    path.write_bytes(b"\n".join(line for line, _ in EDIT_LINES) + b"\n")
    code, err = run_job("edits", ["--edits", str(path), "--output", str(tmp_path / "out")], capsys)
    assert code == 0 and "Traceback" not in err
    out = tmp_path / "out"
    # lines are rejected under "edits.jsonl:N"; a scored edit under its id (stage `score`)
    got = {r.input_id: r.reason for r in rejects(out).itertuples()}
    assert got == {
        ("rep" if reason == "over_size_limit" else f"edits.jsonl:{n}"): reason
        for n, (_, reason) in enumerate(EDIT_LINES, start=1)
        if reason
    }
    s = stats(out)
    assert s["stages"]["edits"]["read"] == len(EDIT_LINES)
    assert s["tables"]["edits"] == 4
    assert json.loads(rejects(out).query("reason == 'encoding'").detail.iloc[0])["charset"] in ("gb18030", "big5hkscs")


def test_overlap_fault_table_keeps_every_good_record(tmp_path, capsys):
    docs = [f"第{i}个文档讲了一只小猫在河边钓鱼的故事。" for i in range(2000)]
    packed = gzip.compress("".join(d + "\n" for d in docs).encode("utf-8"), mtime=0)
    refs = _mkdir(tmp_path / "refs")
    (refs / "a_whole.txt.gz").write_bytes(packed)
    (refs / "b_cut.txt.gz").write_bytes(packed[: len(packed) // 2])
    (refs / "c_whole.txt.bz2").write_bytes(bz2.compress("".join(d + "\n" for d in docs[:10]).encode("utf-8")))
    test = tmp_path / "test.jsonl"
    lines = [
        json.dumps({"id": f"t{i}", "text": f"测试{i}：小猫在河边钓鱼，钓到了一条大鱼。"}, ensure_ascii=False).encode()
        for i in range(7)
    ]
    lines.insert(3, json.dumps({"id": "gbk", "text": "坏行坏行"}, ensure_ascii=False).encode("gbk"))
    lines.insert(5, b"{broken")
    test.write_bytes(b"\n".join(lines) + b"\n")
    code, err = run_job(
        "overlap", ["--test", str(test), "--reference", str(refs / "*"), "--output", str(tmp_path / "out")], capsys
    )
    assert code == 0 and "Traceback" not in err
    out = tmp_path / "out"
    s, rows = stats(out), rejects(out)
    assert s["stages"]["test_rows"]["written"] == 7  # one bad line rejects that line only
    assert sorted(rows.query("stage == 'test_rows'").reason) == ["encoding", "malformed_json"]
    cut = rows.query("reason == 'truncated_file'")
    assert list(cut.input_id.str.split(":").str[0]) == ["b_cut.txt.gz"]
    detail = json.loads(cut.detail.iloc[0])
    got = s["stages"]["reference_rows"]["read"]
    assert detail["records_read"] > 0 and got == 2000 + 10 + detail["records_read"] + 1  # + the break's row


def test_storium_fault_table(tmp_path, capsys):
    games = _mkdir(tmp_path / "games")
    game = json.loads((FIX / "storium/g_desert.json").read_text(encoding="utf-8"))
    game["characters"][0]["name"] = ["a", "list"]
    first = next(e for s in game["scenes"] for e in s["entries"])
    first["description"] = 12345
    (games / "g_types.json").write_text(json.dumps(game), encoding="utf-8")
    (games / "g_utf16.json").write_bytes((FIX / "storium/g_garden.json").read_text(encoding="utf-8").encode("utf-16"))
    odd = json.loads((FIX / "storium/g_orchard.json").read_text(encoding="utf-8"))
    odd["scenes"] += ["notascene", None, {"entries": "abc"}]  # once empty scenes, no reject
    odd["characters"].append(dict(odd["characters"][0], name="Twin"))  # a repeated character_seq_id
    (games / "g_odd.json").write_text(json.dumps(odd), encoding="utf-8")
    code, err = run_job("storium", ["--games", str(games), "--output", str(tmp_path / "out")], capsys)
    assert code == 0 and "Traceback" not in err
    rows = rejects(tmp_path / "out")
    reasons = sorted(rows.reason)
    assert "utf16" in reasons
    scene_rows = {r.input_id.split(":", 1)[1]: r.reason for r in rows.itertuples() if ":scene" in r.input_id}
    n = len(odd["scenes"])
    assert {k: scene_rows.get(k) for k in (f"scene{n - 3}", f"scene{n - 2}", f"scene{n - 1}:entries")} == {
        f"scene{n - 3}": "bad_field_type",
        f"scene{n - 2}": "bad_field_type",
        f"scene{n - 1}:entries": "bad_field_type",
    }
    assert "duplicate_id" in set(rows[rows.input_id.str.contains(":character")].reason)
    characters = pd.read_parquet(tmp_path / "out" / "characters")
    assert characters.character_id.is_unique and "Twin" not in set(characters.name)
    stats(tmp_path / "out")


def test_chapterbreak_second_work_with_a_seen_id_is_a_rejects_row(tmp_path, capsys):
    src = (FIX / "chapterbreak/ao3/works.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(src[0])
    second = dict(first, title="Another work entirely")
    works = tmp_path / "works.jsonl"
    works.write_text("\n".join([src[0], json.dumps(second)]) + "\n", encoding="utf-8")
    code, err = run_job("chapterbreak", ["--ao3", str(works), "--output", str(tmp_path / "out")], capsys)
    assert code == 0 and "Traceback" not in err
    rows = rejects(tmp_path / "out")
    dup = rows.query("reason == 'duplicate_id'")
    assert list(dup.input_id) == ["works.jsonl:2"]
    assert json.loads(dup.detail.iloc[0])["first_at"] == "works.jsonl:1"
    books = pd.read_parquet(tmp_path / "out" / "books")
    assert "works.jsonl:2" in set(books.input_id)
    stats(tmp_path / "out")


def test_evaluate_oversized_prediction_is_a_rejects_row_in_seconds(tmp_path, capsys):
    pred = tmp_path / "pred.jsonl"
    pred.write_text(json.dumps({"story": "小猫" * 600_000}, ensure_ascii=False) + "\n", encoding="utf-8")
    code, err = run_job(
        "evaluate",
        [
            "--task",
            "outgen",
            "--predictions",
            str(pred),
            "--gold",
            str(_gold(tmp_path)),
            "--output",
            str(tmp_path / "out"),
        ],
        capsys,
    )
    assert code == 2 and "Traceback" not in err and "do not match one to one" in err
    rows = rejects(tmp_path / "out")
    big = rows.query("reason == 'over_size_limit'")
    assert json.loads(big.detail.iloc[0])["bytes"] > 3_000_000
    stats(tmp_path / "out")


def test_glge_split_file_that_is_a_folder_is_not_a_file(tmp_path, capsys):
    root = tmp_path / "glge"
    shutil.copytree(FIX / "glge" / "tiny_data", root / "tiny_data")
    task = root / "tiny_data"
    target = task / "org_data" / "dev.src"
    target.unlink()
    target.mkdir()
    empty = _mkdir(tmp_path / "nothing")
    code, err = run_job("glge", ["--input", str(root), "--output", str(tmp_path / "out")], capsys)
    assert code == 0 and "Traceback" not in err
    rows = rejects(tmp_path / "out")
    assert "not_a_file" in set(rows.reason) and "internal_error" not in set(rows.reason)
    stats(tmp_path / "out")
    code, err = run_job("glge", ["--input", str(empty), "--output", str(tmp_path / "out2")], capsys)
    assert code == 0 and "warning:" in err and "no GLGE task folder" in err
    assert "no GLGE task folder" in stats(tmp_path / "out2")["warnings"][0]
    assert "## Warnings" in (tmp_path / "out2" / "CARD.md").read_text(encoding="utf-8")


def test_lot_utf16_and_empty_files(tmp_path, capsys):
    stories = _mkdir(tmp_path / "stories")
    (stories / "a.jsonl").write_bytes((ROOT / "samples/lot/stories.jsonl").read_bytes())
    (stories / "b_utf16.jsonl").write_bytes(
        (ROOT / "samples/lot/stories.jsonl").read_text(encoding="utf-8").splitlines()[0].encode("utf-16") + b"\n"
    )
    (stories / "c_empty.jsonl").write_bytes(b"")
    code, err = run_job(
        "lot", ["--stories", str(stories), "--splits", "8,1,1", "--output", str(tmp_path / "out")], capsys
    )
    assert code == 0 and "Traceback" not in err
    assert "warning:" in err and "c_empty.jsonl" in err
    assert any("c_empty.jsonl" in w for w in stats(tmp_path / "out")["warnings"])
    reasons = set(rejects(tmp_path / "out").reason)
    assert "utf16" in reasons and "binary_file" not in reasons
    stats(tmp_path / "out")


def test_chapterbreak_warns_once_of_an_empty_book(tmp_path, capsys):
    """chapterbreak reads its books twice (the second read finds the book keys): an empty
    book is still one warning on stderr, in stats.json and in the card."""
    books = _mkdir(tmp_path / "books")
    shutil.copy(FIX / "chapterbreak/books/short_chapters.txt", books)
    (books / "empty.txt").write_bytes(b"")
    code, err = run_job("chapterbreak", ["--gutenberg", str(books), "--output", str(tmp_path / "out")], capsys)
    assert code == 0 and "Traceback" not in err
    assert err.count("empty.txt' is empty") == 1
    assert [w for w in stats(tmp_path / "out")["warnings"] if "empty.txt" in w] == [
        f"input file {str(books / 'empty.txt')!r} is empty: it holds no records"
    ]
    assert (tmp_path / "out" / "CARD.md").read_text(encoding="utf-8").count("empty.txt' is empty") == 1


@pytest.mark.parametrize(
    "job,argv,words",
    [
        ("chapterbreak", [], "--gutenberg"),
        ("overlap", [], "--lot"),
        ("stories", [], "--input"),
        ("storium", ["--games", str(FIX / "storium/g_desert.json"), "--budget", "0"], "--budget"),
        # values once taken with exit status 0 (a -1-gram audit, every story story_too_long,
        # 4,096 files per table) or a traceback (a mistyped runner)
        (
            "lot",
            ["--stories", str(ROOT / "samples/lot/stories.jsonl"), "--runner", "DirectRuner"],
            "did you mean DirectRunner?",
        ),
        (
            "lot",
            ["--stories", str(ROOT / "samples/lot/stories.jsonl"), "--max-story-chars", "-5"],
            "must be at least 0 (not -5)",
        ),
        (
            "lot",
            ["--stories", str(ROOT / "samples/lot/stories.jsonl"), "--shard-bytes=0"],
            "--shard-bytes: must be at least 1",
        ),
        ("glge", ["--input", str(FIX / "glge"), "--shards", "-1"], "--shards: must be at least 1"),
        (
            "overlap",
            ["--lot", str(FIX), "--reference", str(ROOT / "samples/lot/stories.jsonl")],
            "takes no --reference",
        ),
        (
            "overlap",
            ["--test", str(ROOT / "samples/lot/stories.jsonl"), "--reference", str(FIX), "--n=0"],
            "--n: must be at least 1",
        ),
        ("stories", ["--input", str(FIX / "site/dumps"), "--min-han-ratio", "2"], "must be from 0 to 1 (not 2)"),
        ("stories", ["--input", str(FIX / "site/dumps"), "--paper-length-filter", "--max-words", "100"], "50-500"),
        ("stories", ["--input", str(FIX / "site/dumps"), "--min-words", "500", "--max-words", "10"], "no story could"),
        ("glge", ["--input", str(FIX / "glge"), "--tasks", "tiny", "nosuch"], "--tasks nosuch: no such task"),
        ("glge", ["--lot", str(FIX / "no_such_build")], "not a folder"),
        (
            "chapterbreak",
            ["--ao3", str(FIX / "chapterbreak/ao3"), "--heading-styles", "chapters"],
            "'chapters' is not one",
        ),
        (
            "chapterbreak",
            ["--ao3", str(FIX / "chapterbreak/ao3"), "--prefix-lengths", "256,-5"],
            "must be from 1 to 2147483648 (not -5)",
        ),
        ("chapterbreak", ["--ao3", str(FIX / "chapterbreak/ao3"), "--n-negatives", "0"], "--n-negatives: must be"),
        ("chapterbreak", ["--ao3", str(FIX / "chapterbreak/ao3"), "--duplicate-threshold", "2"], "from 0 to 1"),
    ],
)
def test_inconsistent_flags_are_one_error_line(job, argv, words, tmp_path, capsys):
    code, err = run_job(job, argv + ["--output", str(tmp_path / "out")], capsys)
    assert_one_error_line(code, err, job, words)


def test_stories_fault_table_long_lines_are_cleaned_in_seconds(tmp_path, capsys):
    import time

    dumps = _mkdir(tmp_path / "dumps")
    good = (FIX / "site/dumps/stories.jsonl").read_text(encoding="utf-8").splitlines()[0]
    story = json.loads(good)["story"]
    runaway = {"id": "long", "story": story + "\n" + "a" * 300_000 + "\n" + " " * 300_000 + "x\n" + "." * 200_000}
    lines = [good, json.dumps(runaway, ensure_ascii=False), "{broken", json.dumps({"id": "n", "story": 5})]
    (dumps / "a.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (dumps / "b.jsonl").write_bytes(good.encode("utf-16"))
    start = time.perf_counter()
    code, err = run_job("stories", ["--input", str(dumps / "*.jsonl"), "--output", str(tmp_path / "out")], capsys)
    assert code == 0 and "Traceback" not in err
    assert time.perf_counter() - start < 60  # the e-mail pattern alone took minutes on such lines
    s = stats(tmp_path / "out")
    reasons = set(rejects(tmp_path / "out").reason)
    assert {"utf16", "malformed_json"} <= reasons and "internal_error" not in reasons
    assert s["tables"]["stories"] >= 1


@pytest.mark.parametrize("task", ["cnndm", "squadqg"])
def test_evaluate_glge_pair_too_big_for_the_official_rouge_table_is_rejected_at_once(task):
    import time

    from annotators.evaluate.config import EvalConfig
    from annotators.evaluate.steps import score_pair
    from schemas.evaluate import Pair

    words = " ".join(f"w{i % 50}" for i in range(3000))  # one 3,000-word "sentence" each side
    pair = Pair("1", "1", "p:1", "g:1", {"text": words}, {"text": words, "source": words})
    start = time.perf_counter()
    result = score_pair(pair, EvalConfig(task=task, source="src.txt"))
    assert result.reason == "over_size_limit" and result.detail["prediction_words"] == 3000
    assert time.perf_counter() - start < 2
    small = Pair("1", "1", "p:1", "g:1", {"text": "a short summary ."}, {"text": "a short summary .", "source": "s"})
    assert isinstance(score_pair(small, EvalConfig(task=task, source="src.txt")), list)


@pytest.mark.parametrize(
    "job,typo,meant",
    [
        ("lot", ["--seeed", "3"], "--seed"),
        ("chapterbreak", ["--prefix-lenghts", "512"], "--prefix-lengths"),
        ("overlap", ["--tokeniser", "regex"], "--tokenizer"),
    ],
)
def test_a_mistyped_flag_is_one_error_line_not_a_run_without_it(job, typo, meant, tmp_path, capsys):
    """`--seeed 3` used to be dropped by Beam with a warning, and the job ran with seed 0."""
    code, err = run_job(job, DRY_RUNS[job] + ["--output", str(tmp_path / "out"), *typo], capsys)
    assert_one_error_line(code, err, job, f"unrecognized arguments: {' '.join(typo)}", f"did you mean {meant}?")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "job", ["bias", "chapterbreak", "edits", "evaluate", "glge", "lot", "overlap", "stories", "storium"]
)
def test_help_names_the_command_and_says_what_the_job_does(job, capsys):
    """`--help` is for the job's users: its usage line is the command they type, and the text
    above the options says what goes in and out, not how the code is wired."""
    module = importlib.import_module(f"pipelines.{job}")
    with pytest.raises(SystemExit) as exc:
        main(module.run, job, ["--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and out.startswith(f"usage: python -m pipelines.{job} ")
    about = out[: out.index("\noptions:")]
    assert "iring only" not in about and "issue" not in about and "Composite transforms" not in about


# ----------------------------------------------------------------------------- lone surrogates
def _surrogate_inputs(tmp: pathlib.Path) -> dict:
    """job -> argv whose main input holds one record with a lone surrogate escape (`\\udc00`,
    which json.loads accepts and no UTF-8 writer can encode) beside good records."""
    lone = "\\udc00"
    lot = tmp / "stories.jsonl"
    good = (ROOT / "samples/lot/stories.jsonl").read_text(encoding="utf-8").splitlines()[:8]
    first = json.loads(good[0])
    lot.write_text("\n".join(good + [f'{{"id": "x{lone}", "story": {json.dumps(first["story"][::-1])}}}']) + "\n")
    dumps = _mkdir(tmp / "dumps")
    (dumps / "a.jsonl").write_text(
        (FIX / "site/dumps/stories.jsonl").read_text(encoding="utf-8")
        + f'{{"id": "y", "story": "{lone}{json.dumps(first["story"])[1:-1]}"}}\n',
        encoding="utf-8",
    )
    edits = tmp / "edits.jsonl"
    edits.write_text(
        '{"id": "ok", "generated": "a dog ran", "published": "a dog ran far"}\n'
        f'{{"id": "bad{lone}", "generated": "a cat sat", "published": "a cat sat down"}}\n'
    )
    test = tmp / "test.jsonl"
    test.write_text(f'{{"id": "t0", "text": "小猫在河边钓鱼。"}}\n{{"id": "t{lone}", "text": "小狗在河边。"}}\n')
    games = _mkdir(tmp / "games")
    shutil.copy(FIX / "storium/g_desert.json", games / "g_desert.json")
    (games / "g_bad.json").write_text(
        (FIX / "storium/g_garden.json").read_text(encoding="utf-8").replace('"', f'"{lone}', 1), encoding="utf-8"
    )
    return {
        "lot": ["--stories", str(lot), "--splits", "8,1,1"],
        "stories": ["--input", str(dumps)],
        "edits": ["--edits", str(edits)],
        "overlap": ["--test", str(test), "--reference", str(ROOT / "samples/lot/stories.jsonl")],
        "storium": ["--games", str(games)],
    }


@pytest.mark.parametrize("job", ["edits", "lot", "overlap", "stories", "storium"])
def test_a_lone_surrogate_escape_is_a_rejects_row_not_a_crash(job, tmp_path, capsys):
    argv = _surrogate_inputs(tmp_path)[job]
    code, err = run_job(job, argv + ["--output", str(tmp_path / "out")], capsys)
    assert code == 0 and "Traceback" not in err, err
    rows = rejects(tmp_path / "out")
    bad = rows[rows.detail.str.contains("lone surrogate")]
    assert list(bad.reason) == ["malformed_json"] and "internal_error" not in set(rows.reason), rows
    assert sum(s["written"] for s in stats(tmp_path / "out")["stages"].values()) > 0


# ----------------------------------------------------------------------------- pretty-printed JSON
@pytest.mark.parametrize(
    "job, flag, records",
    [
        ("stories", "--input", [{"id": "1", "story": "小猫在河边钓鱼。"}, {"id": "2", "story": "小狗在门口等。"}]),
        ("lot", "--stories", [{"id": "1", "story": "小猫在河边钓鱼。"}, {"id": "2", "story": "小狗在门口等。"}]),
        ("edits", "--edits", [{"id": "a", "generated": "a cat sat", "published": "a cat sat down"}]),
    ],
)
def test_a_pretty_printed_json_file_says_how_to_make_it_json_lines(job, flag, records, tmp_path, capsys):
    """One JSON array printed over many lines (json.dumps(indent=2), `jq .`) where JSON lines are
    read gave a bare `malformed_json` row per line: every row is kept (read = written +
    rejected), each says what the line looks like and how to convert the file, and the job's
    summary names the file once, with its count and the jq command."""
    pretty = tmp_path / "data.json"
    pretty.write_text(json.dumps(records, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    lines = len(pretty.read_text(encoding="utf-8").splitlines())
    code, err = run_job(job, [flag, str(pretty), "--output", str(tmp_path / "out")], capsys)
    assert code == 0 and "Traceback" not in err, err
    rows = rejects(tmp_path / "out")
    assert len(rows) == lines and set(rows.reason) == {"malformed_json"}
    assert rows.detail.str.contains("convert with `jq -c '.[]' file.json > file.jsonl`", regex=False).all()
    data = stats(tmp_path / "out")
    assert data["pretty_printed_json"] == {"data.json": lines}
    warning = f"warning: data.json: {lines} line(s) rejected as malformed_json look like one JSON document"
    assert warning in err and "`jq -c '.[]' data.json > data.jsonl`" in err
    assert warning[len("warning: ") :] in (tmp_path / "out" / "CARD.md").read_text(encoding="utf-8")


def test_a_json_lines_file_with_a_broken_line_gets_no_pretty_printing_hint(tmp_path, capsys):
    lines = ['{"id": "1", "story": "小猫在河边钓鱼。"}', '{"id": "2", "story": "小狗', "{oops"]
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, err = run_job("stories", ["--input", str(tmp_path / "s.jsonl"), "--output", str(tmp_path / "o")], capsys)
    rows = rejects(tmp_path / "o")
    assert code == 0 and list(rows[rows.reason == "malformed_json"].input_id) == ["s.jsonl:2", "s.jsonl:3"]
    assert not rows.detail.str.contains("jq").any() and "jq" not in err
    assert "pretty_printed_json" not in stats(tmp_path / "o")


# ----------------------------------------------------------------------------- outputs that are inputs
def test_an_output_that_is_the_jobs_input_or_another_jobs_output_is_refused(tmp_path, capsys):
    lot = tmp_path / "lot"
    code, err = run_job("lot", ["--stories", str(ROOT / "samples/lot/stories.jsonl"), "--output", str(lot)], capsys)
    assert code == 0, err
    before = {p: p.read_bytes() for p in lot.rglob("*") if p.is_file()}
    code, err = run_job("bias", ["--lot", str(lot), "--output", str(lot)], capsys)
    assert_one_error_line(code, err, "bias", "holds this job's input")
    review = lot / "review" / "senpos_val.jsonl"
    argv = ["--stories", str(ROOT / "samples/lot/stories.jsonl"), "--senpos-reviews", str(review)]
    code, err = run_job("lot", argv + ["--output", str(lot)], capsys)
    assert_one_error_line(code, err, "lot", "holds this job's input", "senpos_val.jsonl")
    code, err = run_job("overlap", ["--lot", str(tmp_path / "lot"), "--output", str(lot / "audit")], capsys)
    assert code == 0, err  # an audit inside the build's folder ...
    code, err = run_job("lot", ["--stories", str(ROOT / "samples/lot/stories.jsonl"), "--output", str(lot)], capsys)
    assert_one_error_line(code, err, "lot", "holds another output", "audit/stats.json")  # ... is not deleted
    code, err = run_job("bias", ["--lot", str(lot), "--output", str(lot / "audit")], capsys)
    assert_one_error_line(code, err, "bias", "the output of job 'overlap', not of 'bias'")
    assert all(p.read_bytes() == data for p, data in before.items())


# ----------------------------------------------------------------------------- compressed inputs
def test_compressed_line_and_file_inputs_are_read_decompressed(tmp_path, capsys):
    """.gz/.bz2 stories, dumps and books were read as their compressed bytes: 18 junk rejects
    and no story for a gzipped LOT sample, a gzipped book a binary_file."""
    sample = (ROOT / "samples/lot/stories.jsonl").read_bytes()
    stories = _mkdir(tmp_path / "stories")
    (stories / "a.jsonl.gz").write_bytes(gzip.compress(sample[: len(sample) // 2].rsplit(b"\n", 1)[0] + b"\n"))
    packed = gzip.compress(sample, mtime=0)
    (stories / "b.jsonl.gz").write_bytes(packed[: len(packed) * 3 // 4])  # cut: its first lines are kept
    (stories / "c.jsonl.bz2").write_bytes(bz2.compress(sample))
    code, err = run_job(
        "lot", ["--stories", str(stories), "--splits", "8,1,1", "--output", str(tmp_path / "lot")], capsys
    )
    assert code == 0 and "Traceback" not in err, err
    s, rows = stats(tmp_path / "lot"), rejects(tmp_path / "lot")
    assert s["inputs"] == [str(stories)] and s["stages"]["parse"]["written"] > 48
    cut = rows.query("reason == 'truncated_file'")
    assert list(cut.input_id.str.split(":").str[0]) == ["b.jsonl.gz"], rows
    detail = json.loads(cut.detail.iloc[0])
    assert detail["records_read"] > 0 and cut.input_id.iloc[0] == f"b.jsonl.gz:{detail['records_read'] + 1}"
    assert not set(rows.reason) & {"binary_file", "undecodable", "malformed_json", "internal_error"}, rows

    dumps = _mkdir(tmp_path / "dumps")  # a folder of compressed dumps: a story per .txt, one per .jsonl line
    (dumps / "a.jsonl.gz").write_bytes(gzip.compress((FIX / "site/dumps/stories.jsonl").read_bytes()))
    (dumps / "b.txt.bz2").write_bytes(bz2.compress((FIX / "site/dumps/gbk-story.txt").read_bytes()))
    code, err = run_job("stories", ["--input", str(dumps), "--output", str(tmp_path / "st")], capsys)
    assert code == 0 and "Traceback" not in err, err
    s = stats(tmp_path / "st")
    assert s["stages"]["dump_files"]["read"] == 1 and s["stages"]["dump_lines"]["read"] >= 4, s["stages"]

    books = _mkdir(tmp_path / "books")  # the same book plain and gzipped: one book, its copy a duplicate
    book = FIX / "chapterbreak/books/hallow_fen_1990s.txt"
    shutil.copy(book, books / "a.txt")
    (books / "b.txt.gz").write_bytes(gzip.compress(book.read_bytes()))
    code, err = run_job("chapterbreak", ["--gutenberg", str(books), "--output", str(tmp_path / "cb")], capsys)
    assert code == 0 and "Traceback" not in err, err
    s = stats(tmp_path / "cb")
    assert s["stages"]["gutenberg_books"]["read"] == 2 and s["stages"]["duplicates"]["rejected_by_reason"] == {
        "duplicate_book": 1
    }

    # a whole-file input cut short: a truncated_file row, never the part before the cut as a whole
    # file (a gzipped book cut in half was built as a shorter book)
    packed = gzip.compress(book.read_bytes())
    (books / "c.txt.gz").write_bytes(packed[: len(packed) // 2])
    code, err = run_job("chapterbreak", ["--gutenberg", str(books), "--output", str(tmp_path / "cb2")], capsys)
    assert code == 0 and "Traceback" not in err, err
    cut = rejects(tmp_path / "cb2").query("input_id == 'c.txt.gz'")
    assert list(cut.reason) == ["truncated_file"] and json.loads(cut.detail.iloc[0])["content_bytes_read"] > 0
    games = _mkdir(tmp_path / "games")
    packed = gzip.compress((FIX / "storium/g_desert.json").read_bytes())
    (games / "g.json.gz").write_bytes(packed[: len(packed) // 2])
    shutil.copy(FIX / "storium/g_garden.json", games / "h.json")
    code, err = run_job("storium", ["--games", str(games), "--output", str(tmp_path / "st2")], capsys)
    assert code == 0 and "Traceback" not in err, err
    assert list(rejects(tmp_path / "st2").query("stage == 'games'").reason) == ["truncated_file"]


# ----------------------------------------------------------------------------- lines too long to be a record
def test_a_json_array_written_on_one_line_is_one_line_too_long_row(tmp_path, capsys):
    """`json.dump(stories, f)` writes a whole dump on one line: it was read whole, parsed into
    millions of objects (several GB for a few hundred MB) and then rejected as not_an_object.
    It is read past now, holding only its first bytes: one line_too_long row, plain or
    gzipped, the lines around it kept."""
    sample = (ROOT / "samples/lot/stories.jsonl").read_text(encoding="utf-8").splitlines()
    stories = [json.loads(line) for line in sample]
    one = json.dumps(stories, ensure_ascii=False).encode("utf-8")
    array = b"[" + b",".join([one[1:-1]] * (MAX_LINE_BYTES // len(one) + 1)) + b"]"
    assert len(array) > MAX_LINE_BYTES
    data = "\n".join(sample[:5]).encode() + b"\n" + array + b"\n" + "\n".join(sample[5:10]).encode() + b"\n"
    dumps = _mkdir(tmp_path / "dumps")
    (dumps / "a.jsonl").write_bytes(data)
    (dumps / "b.jsonl.gz").write_bytes(gzip.compress(data, compresslevel=1))
    for job, flag in (("stories", "--input"), ("lot", "--stories")):
        out = tmp_path / job
        code, err = run_job(job, [flag, str(dumps), "--output", str(out)], capsys)
        assert code == 0 and "Traceback" not in err, err
        long = rejects(out).query("reason == 'line_too_long'")
        assert sorted(long.input_id) == ["a.jsonl:6", "b.jsonl.gz:6"], rejects(out)
        detail = json.loads(long.detail.iloc[0])
        assert detail["line_bytes"] == len(array) and detail["limit_bytes"] == MAX_LINE_BYTES
        assert detail["starts_with"].startswith('[{"id": ') and "jq -c" in detail["message"]
        first = next(iter(stats(out)["stages"].values()))
        assert first["read"] == 22 and first["balanced"], first  # 10 stories and the array line, twice


def test_an_output_that_is_a_file_is_refused_before_the_run(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("mine\n")
    code, err = run_job("chapterbreak", ["--ao3", str(FIX / "chapterbreak/ao3"), "--output", str(afile)], capsys)
    assert_one_error_line(code, err, "chapterbreak", "is a file, not a folder")
    assert afile.read_text() == "mine\n" and not (tmp_path / "afile.incomplete").exists()


def test_an_empty_output_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # '' once wrote the whole output into ./.incomplete and exited 0
    code, err = run_job("chapterbreak", ["--ao3", str(FIX / "chapterbreak/ao3"), "--output", ""], capsys)
    assert_one_error_line(code, err, "chapterbreak", "'' names no folder")
    assert list(tmp_path.iterdir()) == []


def test_evaluate_exits_2_when_an_example_could_not_be_scored(tmp_path, capsys):
    """A runaway 3,000-word xsum pair was an over_size_limit reject while the job exited 0 with
    ROUGE over the other examples: the best ones only, with nothing on stderr."""
    gold = [f"summary number {i} of the news ." for i in range(5)]
    gold[3] = " ".join(f"g{i}" for i in range(3000))
    preds = list(gold)
    preds[3] = " ".join(f"p{i}" for i in range(3000))
    (tmp_path / "gold.tgt").write_text("\n".join(gold) + "\n", encoding="utf-8")
    (tmp_path / "pred.txt").write_text("\n".join(preds) + "\n", encoding="utf-8")
    argv = ["--task", "xsum", "--predictions", str(tmp_path / "pred.txt"), "--gold", str(tmp_path / "gold.tgt")]
    code, err = run_job("evaluate", argv + ["--output", str(tmp_path / "out")], capsys)
    assert code == 2 and "Traceback" not in err
    assert "could not be read or scored" in err and "'score/over_size_limit': 1" in err, err
    code, err = run_job("evaluate", argv + ["--output", str(tmp_path / "out2"), "--allow-partial"], capsys)
    assert code == 0 and stats(tmp_path / "out2")["stages"]["score"]["written"] == 4
    code, err = run_job("evaluate", argv[2:] + ["--output", str(tmp_path / "out3")], capsys)
    assert_one_error_line(code, err, "evaluate", "required: --task")


@pytest.mark.parametrize(
    "spec,words",
    [
        ('{"name": "x"}', "site spec lacks"),
        (None, "no such file"),
        ("BAD_SELECTOR", "bad CSS selector body 'div[[['"),
    ],
)
def test_stories_with_a_bad_site_spec_is_one_error_line(spec, words, tmp_path, capsys):
    """A malformed local spec raised SpecError with a traceback; a selector soupsieve cannot
    compile made every page a bad_selector reject, with exit 0."""
    path = tmp_path / "site.json"
    if spec == "BAD_SELECTOR":
        good = json.loads((ROOT / "samples/sites/example-fables.json").read_text(encoding="utf-8"))
        spec = json.dumps({**good, "body": "div[[["})
    if spec is not None:
        path.write_text(spec, encoding="utf-8")
    pages = _mkdir(tmp_path / "pages")
    code, err = run_job(
        "stories", ["--pages", str(pages), "--site", str(path), "--output", str(tmp_path / "out")], capsys
    )
    assert_one_error_line(code, err, "stories", f"--site {path}: ", words)


def test_overlap_against_a_reference_with_no_readable_row_says_so(tmp_path, capsys):
    """A GBK reference (whole-file not_utf8) left summary.md at 'Percent 0.00%' with no note."""
    (tmp_path / "ref.txt").write_bytes("小猫在河边钓鱼。\n".encode("gbk") * 50)
    test = tmp_path / "test.jsonl"
    test.write_text(json.dumps({"id": "t0", "text": "小猫在河边钓鱼，钓到了一条大鱼。"}, ensure_ascii=False) + "\n")
    argv = ["--test", str(test), "--reference", str(tmp_path / "ref.txt"), "--output", str(tmp_path / "out")]
    code, err = run_job("overlap", argv, capsys)
    assert code == 0 and "Traceback" not in err
    summary = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert f"The reference `{tmp_path / 'ref.txt'}` has no readable rows" in summary
    assert "empty_split" in set(rejects(tmp_path / "out").reason)
    argv[3] = str(ROOT / "samples/lot/stories.jsonl")  # a readable reference: no such note
    argv[-1] = str(tmp_path / "out2")
    assert run_job("overlap", argv, capsys)[0] == 0
    assert "no readable rows" not in (tmp_path / "out2" / "summary.md").read_text(encoding="utf-8")


def test_edits_with_a_folder_that_is_no_spacy_pipeline_skips_the_analysis(tmp_path, capsys):
    """spacy.load raised E053 on an empty folder in every worker and the whole job was lost."""
    edits = tmp_path / "edits.jsonl"
    edits.write_text('{"id": "ok", "generated": "a dog ran", "published": "a dog ran far"}\n')
    argv = ["--edits", str(edits), "--spacy-model", str(_mkdir(tmp_path / "nomodel")), "--output", str(tmp_path / "o")]
    code, err = run_job("edits", argv, capsys)
    assert code == 0 and "Traceback" not in err, err
    assert stats(tmp_path / "o")["tables"]["edits"] == 1
    assert "not a spaCy pipeline" in (tmp_path / "o" / "CARD.md").read_text(encoding="utf-8")


def test_evaluate_a_glge_gold_folder_takes_its_split_file(tmp_path, capsys):
    """A GLGE org_data folder as --gold read dev, test and train .tgt alike: perfect
    predictions scored against the wrong lines."""
    folder = FIX / "glge" / "tiny_data" / "org_data"
    argv = ["--task", "xsum", "--predictions", str(folder / "test.tgt"), "--gold", str(folder)]
    code, err = run_job("evaluate", argv + ["--output", str(tmp_path / "out")], capsys)
    assert code == 0, err
    metrics = pd.read_parquet(tmp_path / "out" / "metrics")
    assert set(metrics.value) == {100.0}
    code, err = run_job("evaluate", argv + ["--split", "nosuch", "--output", str(tmp_path / "out2")], capsys)
    assert_one_error_line(code, err, "evaluate", "a folder with no nosuch.tgt")


def test_lot_stories_folder_reads_parquet_and_json_lines_alike(tmp_path, capsys):
    """A --stories folder holding parquet and JSON lines read the parquet only, without a word."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    lines = (ROOT / "samples/lot/stories.jsonl").read_text(encoding="utf-8").splitlines()
    folder = _mkdir(tmp_path / "stories")
    (folder / "b.jsonl").write_text("\n".join(lines[:10]) + "\n", encoding="utf-8")
    rows = [json.loads(x) for x in lines[10:20]]
    pq.write_table(pa.Table.from_pylist([{"id": r["id"], "story": r["story"]} for r in rows]), folder / "a.parquet")
    code, err = run_job("lot", ["--stories", str(folder), "--splits", "8,1,1", "--output", str(tmp_path / "o")], capsys)
    assert code == 0, err
    assert stats(tmp_path / "o")["stages"]["parse"]["read"] == 20


# ----------------------------------------------------------------------------- Ctrl-C
def _session_processes(sid: int) -> list[str]:
    """The command lines of the processes still in session `sid` (the job and its workers)."""
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[3]) == sid:  # field 6: the session id
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError, IndexError):  # it ended meanwhile
            continue
    return found


@pytest.mark.skipif(not pathlib.Path("/proc/self/stat").exists(), reason="lists processes through /proc")
@pytest.mark.parametrize("mode", [[], ["--direct_running_mode=multi_processing"]], ids=["pool", "beam_processes"])
def test_ctrl_c_is_one_line_exit_130_and_leaves_the_previous_output_and_no_process(mode, tmp_path):
    """Ctrl-C on a running `python -m pipelines.lot` (SIGINT to the whole process group, as a
    terminal sends it: the job and its pool workers or Beam's worker processes): one line
    on stderr, no traceback, exit status 130, the previous output's files byte for byte, no
    staging folder and no process of the job left."""
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    rows = [json.loads(x) for x in (ROOT / "samples/lot/stories.jsonl").read_text(encoding="utf-8").splitlines()]
    stories = tmp_path / "stories.jsonl"
    with stories.open("w", encoding="utf-8") as f:
        for i in range(40):  # about 1.8 MB: a run of many seconds
            for r in rows:
                f.write(
                    json.dumps({**r, "id": f"{r['id']}-{i}", "story": f"{r['story']}第{i}次。"}, ensure_ascii=False)
                )
                f.write("\n")
    out = tmp_path / "out"  # a previous build of the job
    (out / "senpos").mkdir(parents=True)
    (out / "stats.json").write_text(json.dumps({"job": "lot"}), encoding="utf-8")
    (out / "senpos" / "train-00000-of-00001.parquet").write_bytes(b"PAR1 previous rows PAR1")
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STORYBENCH_PROGRESS_SECONDS": "0.2", "STORYBENCH_WORKERS": "2"}
    argv = ["--stories", str(stories), "--output", str(out), "--direct_num_workers=2", *mode]
    proc = subprocess.Popen(
        [sys.executable, "-m", "pipelines.lot", *argv],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, which the "terminal" below signals
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        stop = time.monotonic() + 60
        while not any("[storybench" in line for line in lines):  # the run has begun
            assert proc.poll() is None, "".join(lines)
            assert time.monotonic() < stop, "no progress line in 60 s"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    reader.join(timeout=10)
    err = "".join(lines)
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    said = [line for line in err.splitlines() if "interrupted" in line]
    assert said == [
        f"python -m pipelines.lot: interrupted: nothing was written; the previous output in {str(out)!r} is unchanged"
    ], err
    assert err.splitlines()[-1] == said[0]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert not (tmp_path / "out.incomplete").exists()
    stop = time.monotonic() + 10
    while _session_processes(proc.pid):  # the workers are gone with the job
        assert time.monotonic() < stop, _session_processes(proc.pid)
        time.sleep(0.1)
