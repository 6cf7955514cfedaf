"""`pipelines.stories` on a real crawl of the fixture site and on local dumps."""

from __future__ import annotations

import json
import pathlib

import pyarrow.parquet as pq
import pytest
from conftest import check_rejects, jieba_in_job

from pipelines import crawl, lot, stories
from schemas.common import detail_message
from schemas.stories import STORIES_SCHEMA
from tests.fixtures.site.make_site import STORIES
from tests.fixtures.site.server import CRAWL_FLAGS, SLOW_SECONDS, WWW, SiteServer, site_spec

pytestmark = pytest.mark.slow  # end-to-end job runs: `make test-fast` leaves them out

DUMPS = WWW.parent / "dumps"
TEXT = {k: "\n".join(paras) for k, (_, paras) in STORIES.items()}
STORY_04 = "\n".join(
    [
        "下午突然下起了大雨，小林站在公司门口，看着街上匆匆跑过的行人发愁。",
        "一位不认识的老奶奶走过来，把手里的伞递给他，说自己家就在旁边，让他先用着。小林想问她住在哪里，她已经走进了雨里。",
        "第二天，小林拿着伞在附近的小区一家一家地打听，终于在一栋旧楼前找到了老奶奶。"
        "小林后来把这件事写在了自己的博客上，很多人都留言说很感动。",
        "老奶奶的孙女后来给小林发来邮件，说奶奶常常提起他。"
        "从那以后，每逢下雨，小林都会在包里多放一把伞，遇到没带伞的人就借给他们。",
    ]
)
STORY_17 = "\n".join(
    [  # GBK served as ISO-8859-1: decoded by its <meta>; full-width link and [at] e-mail gone
        "放学回家的路上，小明发现书包里的钥匙不见了。他沿着来时的路一边走一边找，天慢慢黑了下来。",
        "卖菜的王大爷看见他着急的样子，就问他出了什么事。听说钥匙丢了，王大爷放下手里的活，打着手电陪他一起找。",
        "他们在学校门口的花坛旁边找到了钥匙，上面还挂着妈妈给他编的红绳。小明高兴得跳了起来，连声说谢谢。",
        "后来小明把这件事写成了作文，贴在班级的网页上。"
        "老师在作文后面写道：想认识王大爷的同学可以写信到，他很喜欢收到孩子们的信。",
    ]
)
EXPECTED = {  # url path -> (title, text, encoding, cluster members as url paths)
    "/stories/story-01.html": (
        "小松鼠的冬粮",
        TEXT["01"],
        "utf-8 (http)",
        ["/stories/story-01.html", "/stories/story-06.html"],
    ),
    "/stories/story-02.html": ("老渔夫和海鸥", TEXT["02"], "gb18030 (meta)", ["/stories/story-02.html"]),
    "/stories/story-03.html": ("会唱歌的石头", TEXT["03"], "gb18030 (detected)", ["/stories/story-03.html"]),
    "/stories/story-04.html": ("借伞", STORY_04, "utf-8 (meta)", ["/stories/story-04.html"]),
    "/mirror/story-05.html": (
        "两只山羊",
        TEXT["05"],
        "utf-8 (meta)",
        ["/mirror/story-05.html", "/stories/story-05.html"],
    ),
    "/stories/story-07.html": ("灯塔看守人", TEXT["07"], "utf-8 (meta)", ["/stories/story-07-old.html"]),
    "/stories/story-08.html": ("迟到的信", TEXT["08"], "utf-8 (meta)", ["/stories/story-08.html"]),
    "/stories/story-17.html": ("丢失的钥匙", STORY_17, "gb18030 (meta)", ["/stories/story-17.html"]),
}
REJECTS = {  # (stage, url path, reason)
    ("pages", "/robots.txt", "not_story_page"),
    ("pages", "/index.html", "not_story_page"),
    ("pages", "/list/page-1.html", "not_story_page"),
    ("pages", "/list/page-2.html", "not_story_page"),
    ("pages", "/stories/vip/story-14.html", "robots_disallowed"),
    ("pages", "/stories/story-11.html", "too_large"),
    ("pages", "/stories/story-12.pdf", "not_html"),
    ("pages", "/stories/story-13.html", "http_404"),
    ("pages", "/stories/story-15.html", "off_host_redirect"),
    ("pages", "/stories/story-16.html", "retries_exhausted"),
    ("clean", "/stories/story-09.html", "too_short"),
    ("clean", "/stories/story-10.html", "not_chinese"),
    ("exact_dedup", "/stories/story-05.html", "exact_duplicate"),
    ("near_dedup", "/stories/story-06.html", "near_duplicate"),
}


def read(folder: pathlib.Path) -> list[dict]:
    return pq.read_table(folder).to_pylist()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Crawl the fixture site once, then run the stories job in-process and on 2 processes."""
    tmp = tmp_path_factory.mktemp("stories")
    with SiteServer(root=None) as offsite, SiteServer(offsite=offsite.base, slow_seconds=SLOW_SECONDS) as site:
        (tmp / "site.json").write_text(json.dumps(site_spec(site)), encoding="utf-8")
        crawl.run(["--site", str(tmp / "site.json"), "--output", str(tmp / "crawl"), *CRAWL_FLAGS])
    args = ["--pages", str(tmp / "crawl" / "pages"), "--site", str(tmp / "site.json")]
    stories.run([*args, "--output", str(tmp / "out")])
    stories.run(
        [*args, "--output", str(tmp / "out2"), "--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    )
    return {"tmp": tmp, "base": site.base, "out": tmp / "out"}


def test_exact_stories_come_out(built):
    rows, base = read(built["out"] / "stories"), built["base"]
    got = {
        r["url"][len(base) :]: (r["title"], r["text"], r["encoding"], [m[len(base) :] for m in r["cluster_members"]])
        for r in rows
    }
    assert got == EXPECTED
    assert {(r["source"], r["license"], r["lang"]) for r in rows} == {("example-fables", "CC BY 4.0 (fixture)", "zh")}
    assert all(r["cluster_size"] == len(r["cluster_members"]) and r["fetched_at"].endswith("Z") for r in rows)
    assert [r["story_id"] for r in rows] == sorted(r["story_id"] for r in rows)


def test_every_other_page_is_a_reject_with_its_reason(built):
    base = built["base"]
    check_rejects(built["out"])
    rejects = {(r["stage"], r["input_id"][len(base) :], r["reason"]) for r in read(built["out"] / "rejects")}
    assert rejects == REJECTS
    details = {r["input_id"][len(base) :]: detail_message(r["detail"]) for r in read(built["out"] / "rejects")}
    assert details["/stories/story-06.html"] == f"of {base}/stories/story-01.html (jaccard with it 0.939, cluster of 2)"
    assert details["/stories/story-09.html"] == "11 words < 50"


def test_stats_balance_and_count_every_cached_page(built):
    stats = json.loads((built["out"] / "stats.json").read_text(encoding="utf-8"))
    assert stats["balanced"]
    flow = {name: (s["read"], s["written"], s["rejected"]) for name, s in stats["stages"].items()}
    # the crawl merges its per-page cache parts into one when it ends
    assert flow == {
        "page_files": (1, 1, 0),
        "pages": (22, 12, 10),
        "clean": (12, 10, 2),
        "exact_dedup": (10, 9, 1),
        "near_dedup": (9, 8, 1),
        "dedup_id": (8, 8, 0),
    }
    assert stats["tables"] == {"rejects": 14, "stories": 8}
    assert len(stats["duplicate_clusters"]) == 2
    card = (built["out"] / "CARD.md").read_text(encoding="utf-8")
    assert "smallest (url, input_id)" in card and f"{built['base']}/stories/story-06.html" in card


def test_output_is_byte_identical_on_two_worker_processes(built):
    for rel in ("stories/part-00000-of-00001.parquet", "rejects/part-00000-of-00001.parquet", "stats.json", "CARD.md"):
        assert (built["tmp"] / "out" / rel).read_bytes() == (built["tmp"] / "out2" / rel).read_bytes(), rel


def test_stories_table_has_the_columns_pipelines_lot_reads(built):
    schema = pq.read_schema(built["out"] / "stories" / "part-00000-of-00001.parquet")
    for column in ("story_id", "title", "text", "source", "url", "license", "lang"):
        assert schema.field(column).type == STORIES_SCHEMA.field(column).type


def test_pipelines_lot_reads_the_stories_table(built):
    lot.run(["--stories", str(built["out"] / "stories"), "--output", str(built["tmp"] / "lot")])
    stats = json.loads((built["tmp"] / "lot" / "stats.json").read_text(encoding="utf-8"))
    assert stats["stages"]["parse"]["read"] == 8 and stats["stages"]["parse"]["rejected"] == 0


@pytest.fixture(scope="module")
def from_dumps(tmp_path_factory):
    out = tmp_path_factory.mktemp("dumps") / "out"
    stories.run(
        ["--input", f"{DUMPS}/*", "--output", str(out), "--near_dup_threshold", "0.95", "--license", "CC BY-NC 4.0"]
    )
    return out


def test_dumps_become_cleaned_stories(from_dumps):
    rows = {r["input_id"]: r for r in read(from_dumps / "stories")}
    assert sorted(rows) == ["gbk-story.txt", "stories.jsonl:1", "stories.jsonl:5", "stories.jsonl:6"]
    first = rows["stories.jsonl:1"]
    assert (first["title"], first["text"], first["source"], first["license"], first["outline"]) == (
        "灯塔看守人",
        TEXT["07"],
        "dump-a",
        "CC0-1.0",
        ["灯塔", "暴风雨"],
    )
    gbk = rows["gbk-story.txt"]
    assert (gbk["text"], gbk["encoding"], gbk["license"], gbk["source"]) == (
        TEXT["02"],
        "gb18030 (detected)",
        "CC BY-NC 4.0",
        "dump",
    )
    assert gbk["cluster_members"] == ["gbk-story.txt", "stories.jsonl:8"]
    assert rows["stories.jsonl:6"]["text"] == TEXT["06"]  # Jaccard 0.939 < 0.95: kept apart


def test_bad_dump_lines_are_rejects(from_dumps):
    check_rejects(from_dumps)
    rejects = {(r["stage"], r["input_id"], r["reason"]) for r in read(from_dumps / "rejects")}
    assert rejects == {
        ("dump_lines", "stories.jsonl:2", "malformed_json"),
        ("dump_lines", "stories.jsonl:3", "missing_field"),
        ("dump_lines", "stories.jsonl:4", "blank_line"),
        ("dump_lines", "stories.jsonl:7", "not_an_object"),
        ("exact_dedup", "stories.jsonl:8", "exact_duplicate"),
    }


def test_card_lists_the_reasons_the_job_can_give(from_dumps):
    from annotators.core.reasons import reasons_markdown
    from annotators.stories.reasons import JOB_REASONS

    card = (from_dumps / "CARD.md").read_text(encoding="utf-8")
    assert "\n\n" + reasons_markdown(JOB_REASONS) + "\n" in card and "| `malformed_json` |" in card


def files_under(folder: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_rerun_that_writes_fewer_files_leaves_no_stale_file(tmp_path):
    out = tmp_path / "out"
    stories.run(["--input", f"{DUMPS}/*", "--output", str(out), "--shards", "3"])
    assert "stories/part-00002-of-00003.parquet" in files_under(out)
    stories.run(["--input", str(DUMPS / "stories.jsonl"), "--output", str(out)])
    assert sorted(files_under(out)) == [
        "CARD.md",
        "README.md",
        "rejects/part-00000-of-00001.parquet",
        "stats.json",
        "stories/part-00000-of-00001.parquet",
    ]
    assert not (tmp_path / "out.incomplete").exists()
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    # the dumps are routed by extension when the job runs: no .txt matched, no dump_files stage
    assert list(stats["stages"]) == ["dump_lines", "clean", "exact_dedup", "near_dedup", "dedup_id"]
    assert stats["inputs"] == [str(DUMPS / "stories.jsonl")]
    assert "gbk-story.txt" not in {r["input_id"] for r in read(out / "stories")}


def test_a_run_that_fails_leaves_the_previous_output_untouched(tmp_path, monkeypatch):
    out = tmp_path / "out"
    stories.run(["--input", f"{DUMPS}/*", "--output", str(out)])
    before = files_under(out)

    def broken(part):  # a failure while the job runs, after stories were cleaned and spilled
        raise RuntimeError("candidate sets failed")

    monkeypatch.setattr(stories, "listed_blocks", broken)
    with pytest.raises(Exception, match="candidate sets failed"):
        stories.run(["--input", f"{DUMPS}/*", "--output", str(out)])
    assert files_under(out) == before


def test_a_page_with_a_stray_byte_is_a_story_and_stats_count_it(tmp_path):
    """A crawled UTF-8 page holding one windows-1252 apostrophe (0x92) was an `undecodable`
    reject: the job now keeps its story, U+FFFD where the byte was, names it in `encoding`,
    counts it in stats.json (`utf8_replaced`) and the card; a GBK page said to be UTF-8 stays
    undecodable."""
    import pyarrow as pa

    from schemas.crawl import PAGES_SCHEMA, Page

    def html(title, key):
        return (
            f"<meta charset=utf-8><h1>{title}</h1><div id=text><p>" + TEXT[key].replace("\n", "</p><p>") + "</p></div>"
        )

    first = html("小松鼠的冬粮", "01")
    cut = first.index("小兔子")
    bodies = {
        "1": first[:cut].encode("utf-8") + b"\x92" + first[cut:].encode("utf-8"),
        "2": html("老渔夫和海鸥", "02").encode("gbk") + b"\xff",
        "3": html("会唱歌的石头", "03").encode("utf-8"),
    }
    headers = json.dumps({"content-type": "text/html"})
    pages = [
        Page(
            "fables",
            f"http://h.org/story/{k}.html",
            f"http://h.org/story/{k}.html",
            "story",
            200,
            headers,
            b,
            "2024-05-01T12:00:00Z",
        )
        for k, b in bodies.items()
    ]
    (tmp_path / "pages").mkdir()
    pq.write_table(
        pa.Table.from_pylist([p.to_row() for p in pages], schema=PAGES_SCHEMA), tmp_path / "pages" / "part-0.parquet"
    )
    spec = {"name": "fables", "start_urls": ["http://h.org/"], "allowed_hosts": ["h.org"], "follow": "/list/"}
    spec.update({"story": "/story/", "title": "h1", "body": "#text", "license": "CC0-1.0"})
    (tmp_path / "site.json").write_text(json.dumps(spec))
    out = tmp_path / "out"
    stories.run(["--pages", str(tmp_path / "pages"), "--site", str(tmp_path / "site.json"), "--output", str(out)])
    rows = {r["url"][-6:]: r for r in read(out / "stories")}
    assert sorted(rows) == ["1.html", "3.html"]
    assert rows["1.html"]["text"] == TEXT["01"].replace("小兔子", "\ufffd小兔子", 1)
    assert rows["1.html"]["encoding"] == "utf-8 (meta, 1 invalid byte sequence as U+FFFD)"
    assert (rows["3.html"]["text"], rows["3.html"]["encoding"]) == (TEXT["03"], "utf-8 (meta)")
    assert [(r["input_id"][-6:], r["reason"]) for r in read(out / "rejects")] == [("2.html", "undecodable")]
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert stats["balanced"] and stats["utf8_replaced"] == {"pages": 1, "sequences": 1}
    assert "1 page(s) that no charset decodes strictly were read as UTF-8" in (out / "CARD.md").read_text("utf-8")


def test_output_folder_is_a_hugging_face_dataset_card(built):
    """README.md's YAML configs load with datasets.load_dataset, splits and row counts as written."""
    from conftest import check_dataset_card

    assert check_dataset_card(built["out"])
    assert check_dataset_card(built["tmp"] / "crawl")


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--shingle", "0"], "--shingle must be at least 1 (not 0)"),
        (["--num-perm", "100"], "a power of two with --sketch oph (not 100)"),
        (["--near_dup_threshold", "1.5"], "threshold must be in [0.0, 1.0], not 1.5"),
    ],
)
def test_near_duplicate_flags_that_cannot_work_are_usage_errors(flags, words, tmp_path, capsys, samples_dir):
    """One error line and exit status 2, not a traceback from the first story's band keys."""
    from pipelines.engine.usage import main

    with pytest.raises(SystemExit) as exc:
        main(
            stories.run,
            "stories",
            ["--input", str(samples_dir / "lot" / "stories.jsonl"), "--output", str(tmp_path / "out"), *flags],
        )
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "Traceback" not in err
    assert "python -m pipelines.stories: error: " in err and words in err


@pytest.mark.parametrize("workers, where", [("2", "not loaded"), ("1", "loaded")])
def test_the_job_parses_cleans_and_keys_stories_on_the_pool(tmp_path, workers, where):
    """With a pool, each dump line is parsed, cleaned (jieba's word count), keyed and pickled by
    the workers (one pooled stage; clean only accounts for the outcome), and text files are
    cleaned and keyed there too, so the job's own process never loads jieba's dictionary; with
    one worker it does all of that itself."""
    out = tmp_path / "o"
    assert jieba_in_job("stories", ["--input", f"{DUMPS}/*", "--output", str(out)], workers) == where
    stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
    assert stats["stages"]["clean"]["written"] > 0 and stats["stages"]["dump_lines"]["read"] > 0


def test_deduplication_on_the_pool_gives_the_bytes_of_one_process(tmp_path, samples_dir):
    """The sample stories, each twice (exact duplicates) and once more with its last sentence
    dropped (a near-duplicate), on a pool of two workers (exact_dedup's partitions, the
    components' clusters and near_dedup's spill files decided there) and on one process: the
    same files, byte for byte."""
    sample = (samples_dir / "lot" / "stories.jsonl").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in sample.splitlines()]
    lines = []
    for r in rows:
        text = r["story"]
        cut = text[: text.rstrip("。！？").rfind("。") + 1] or text
        for i, story in enumerate([text, text, cut]):
            record = {"id": f"{r['id']}-{i}", "title": r.get("title", ""), "story": story}
            lines.append(json.dumps(record, ensure_ascii=False))
    dump = tmp_path / "dups.jsonl"
    dump.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outs = {}
    for workers in ("2", "1"):
        outs[workers] = tmp_path / f"w{workers}"
        stories.run(["--input", str(dump), "--output", str(outs[workers]), f"--direct_num_workers={workers}"])
    assert files_under(outs["2"]) == files_under(outs["1"])
    stages = json.loads((outs["2"] / "stats.json").read_text(encoding="utf-8"))["stages"]
    assert stages["exact_dedup"]["rejected"] >= len(rows) - 2 and stages["near_dedup"]["rejected"] >= len(rows) - 2


def test_a_repeated_id_is_a_duplicate_id_reject_and_near_duplicates_still_merge(tmp_path):
    """Two dumps numbering their stories alike gave two different stories one story_id (both
    kept): the later one is now a duplicate_id reject naming the input that keeps the id, and
    a near-duplicate with an id of its own is still a near_duplicate."""
    root = pathlib.Path(__file__).parents[2]
    texts = [json.loads(x)["story"] * 2 for x in (root / "samples/lot/stories.jsonl").read_text("utf-8").splitlines()]
    dumps = tmp_path / "dumps"
    dumps.mkdir()

    def line(i, text):
        return json.dumps({"id": i, "story": text}, ensure_ascii=False) + "\n"

    (dumps / "a.jsonl").write_text(line("1", texts[0]) + line("2", texts[1]), encoding="utf-8")
    (dumps / "b.jsonl").write_text(line("1", texts[2]) + line("3", texts[0] + "后来呢？"), encoding="utf-8")
    stories.run(["--input", str(dumps), "--output", str(tmp_path / "out")])
    stats = json.loads((tmp_path / "out" / "stats.json").read_text(encoding="utf-8"))
    assert stats["balanced"] and stats["stages"]["dedup_id"]["rejected_by_reason"] == {"duplicate_id": 1}
    rows = pq.read_table(tmp_path / "out" / "stories").to_pylist()
    assert sorted(r["input_id"] for r in rows) == ["a.jsonl:1", "a.jsonl:2"]
    assert len({r["story_id"] for r in rows}) == 2
    rejects = {r["input_id"]: r for r in pq.read_table(tmp_path / "out" / "rejects").to_pylist()}
    assert rejects["b.jsonl:2"]["reason"] == "near_duplicate"
    assert rejects["b.jsonl:1"]["reason"] == "duplicate_id" and "a.jsonl:1's" in rejects["b.jsonl:1"]["detail"]
