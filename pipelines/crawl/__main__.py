"""`python -m pipelines.crawl`: the crawl job (see pipelines/crawl/__init__.py)."""

import sys

from pipelines.crawl import main

sys.exit(main())
