"""Every reject reason the stories and crawl jobs can write is in the catalogue and in JOB_REASONS."""

from __future__ import annotations

import pathlib
import re

from annotators.core.reasons import SHARED, catalogue, meaning
from annotators.stories.reasons import CRAWL_REASONS, JOB_REASONS, REASONS
from pipelines.crawl.fetch import RETRIED

ROOT = pathlib.Path(__file__).resolve().parents[2]
STORIES_FILES = [*sorted((ROOT / "annotators" / "stories").glob("*.py")), ROOT / "pipelines" / "stories.py"]
CRAWL_FILES = sorted((ROOT / "pipelines" / "crawl").glob("*.py"))
# how the crawl writes a page's error: error="x", refusal = "x", return "x" / "x" if ... else "x"
CRAWL_CODE = re.compile(r'(?:error=|refusal = |return |else )"([a-z]+(?:_[a-z]+)+)"|"([a-z]+(?:_[a-z]+)+)" if ')


def codes(pattern: re.Pattern, files) -> set[str]:
    found = set()
    for path in files:
        for match in pattern.finditer(path.read_text(encoding="utf-8")):
            found.update(g for g in match.groups() if g)
    return found


def test_every_drop_code_of_the_stories_job_is_catalogued_and_listed():
    dropped = codes(re.compile(r'Drop\(\s*"([a-z0-9_]+)"'), STORIES_FILES)
    assert dropped >= {"malformed_json", "unreadable_file", "missing_field", "mojibake", "not_story_page"}
    assert dropped <= set(catalogue()) and dropped <= set(JOB_REASONS)


def test_every_crawl_error_is_catalogued_and_passed_on_by_the_stories_job():
    written = codes(CRAWL_CODE, CRAWL_FILES) - set(RETRIED)
    assert written >= {"robots_disallowed", "robots_unavailable", "off_host_redirect", "too_large", "not_html"}
    assert written | {"http_status"} == set(CRAWL_REASONS)
    assert set(CRAWL_REASONS) <= set(JOB_REASONS) and set(CRAWL_REASONS) <= set(catalogue())
    assert meaning("http_404") == REASONS["http_status"]


def test_own_codes_are_not_shared_synonyms_and_every_listed_code_has_a_meaning():
    assert not set(REASONS) & set(SHARED)
    assert {"bad_json", "unreadable_parquet", "no_text"}.isdisjoint({*REASONS, *JOB_REASONS})
    assert all(meaning(code) for code in JOB_REASONS)
    assert set(REASONS) <= set(JOB_REASONS)
