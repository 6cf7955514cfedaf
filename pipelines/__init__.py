"""Apache Beam jobs of storybench: wiring only (`python -m pipelines.<job> --help`)."""

import os

# Arrow's default allocator (mimalloc) keeps the memory a written table freed, so every table
# a local job wrote raised its resident memory for good (20k LOT stories: +55 MB at the end);
# the system allocator gives it back. Arrow reads this once, when it loads, which is why it is
# set here, before any job imports Beam (and Beam pyarrow). An explicit setting still wins.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

from pipelines.engine.usage import quiet_start  # noqa: E402 (Beam-free: the package loads names lazily)

quiet_start()  # `python -m pipelines.<job>`: Ctrl-C while Beam imports is one line, not a traceback
