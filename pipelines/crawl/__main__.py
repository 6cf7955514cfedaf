"""`python -m pipelines.crawl`: the crawl job (see pipelines/crawl/__init__.py).

By the time `main` returns, the page cache and the report are written and closed, so the
process ends with `os._exit` once the standard streams are flushed: the interpreter's own
finalization runs the C++ destructors of libraries imported with Beam (gRPC) while their
threads may still be running, and on a loaded machine that aborted a crawl stopped by SIGINT
("terminate called without an active exception", exit -6 instead of 130).
"""

import logging
import os
import sys

from pipelines.crawl import main

code = main()
logging.shutdown()
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
