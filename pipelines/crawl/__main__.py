"""`python -m pipelines.crawl`: the crawl job (see pipelines/crawl/__init__.py)."""
from pipelines.crawl import run

run()
