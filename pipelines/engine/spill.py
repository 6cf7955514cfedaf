"""Records parked on disk while only their small keys travel: memory that follows the work.

Why: Beam's local runner holds every PCollection that crosses a stage boundary in memory
until the next stage has read it, and a shuffle carries each element whole. A job that
shuffles small decision keys but needs the full records again afterwards (the stories
job: cleaned stories, deduplicated on their keys) would hold the corpus. `SpillRecords`
writes each record, pickled, to a file of its bundle's (a new file every SPILL_BYTES) where
it is made and emits `(key_of(record), Loc)`; later steps read a record back by its Loc
(`read_records`, grouped per file), or a pool worker a whole file
(`pool_worker.read_file_bytes`). `SpillPickled` does the same for records already keyed
and pickled where they were made. The files live in a folder of the job's staging output
and are deleted once the job no longer needs them (`pipelines.engine.files.after_all` with
`delete_folder`).
"""

from __future__ import annotations

import functools
import pickle
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from annotators.core.outcome import Drop
from pipelines.engine import pool
from pipelines.engine.merge_runs import read_pickles
from pipelines.engine.pool_worker import one
from schemas.common import Loc

SPILL_BYTES = 4 << 20  # a spill file is closed after about this many bytes


class _SpillFiles(beam.DoFn):
    """Writes pickles into this bundle's spill files in `folder` (a new file every SPILL_BYTES)."""

    def __init__(self, folder: str):
        self._folder = folder

    def start_bundle(self):
        self._parts, self._offset, self._path = [], 0, None

    def _park(self, blob: bytes) -> Loc:
        if self._path is None:
            self._path = f"{self._folder.rstrip('/')}/spill-{uuid.uuid4().hex}.pkl"  # a name only, never an output
        loc = Loc(self._path, self._offset, len(blob))
        self._parts.append(blob)
        self._offset += len(blob)
        if self._offset >= SPILL_BYTES:
            self._flush()
        return loc

    def finish_bundle(self):
        self._flush()

    def _flush(self):
        if self._parts:
            with FileSystems.create(
                self._path, mime_type="application/octet-stream", compression_type="uncompressed"
            ) as f:
                f.write(b"".join(self._parts))
        self._parts, self._offset, self._path = [], 0, None


class SpillRecords(_SpillFiles):
    """record -> (key_of(record), Loc), the record pickled into a spill file in `folder`.

    In a local run with a pool (pipelines.engine.pool), `key_of` runs there on the very
    pickle that is spilled; with `pooled=False` (a key that is already in the record) it
    runs here."""

    def __init__(self, folder: str, key_of: Callable[[Any], Any], pooled: bool = True):
        super().__init__(folder)
        self._key_of, self._pooled = key_of, pooled

    def start_bundle(self):
        super().start_bundle()
        workers = pool.current() if self._pooled else None
        self._batches = (
            None if workers is None else pool.Batches(workers, "spill", functools.partial(one, self._key_of))
        )

    def _keyed(self, pairs):
        for loc, result in pairs:
            if isinstance(result, Drop):  # as the key function's exception would have, here
                raise RuntimeError(f"key of a spilled record: {result.detail}")
            yield result[0], loc

    def process(self, record):
        blob = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        loc = self._park(blob)
        if self._batches is not None and self._batches.add(loc, blob=blob):
            yield from self._keyed(self._batches.ready())
            return
        yield self._key_of(record), loc

    def finish_bundle(self):
        super().finish_bundle()
        if self._batches is not None:
            for key_loc in self._keyed(self._batches.finish()):
                yield GlobalWindows.windowed_value(key_loc)


class SpillPickled(_SpillFiles):
    """(key, pickled record) -> (key, Loc): records keyed and pickled where they were made
    (a pool worker, in a local run), so this process writes their bytes without decoding them."""

    def process(self, key_blob):
        key, blob = key_blob
        yield key, self._park(blob)


def read_records(locs: Iterable[Loc]) -> dict[Loc, Any]:
    """The records at `locs`, each file opened once and read in offset order."""
    return {loc: pickle.loads(blob) for loc, blob in read_pickles(locs).items()}
