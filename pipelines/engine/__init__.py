"""The engine every job shares: readers, writers, `Stage`, `JobReport`, job flags and runners.

Jobs import from here only; text logic stays in `annotators/`. The names load on first use
(PEP 562), so that a Beam-free module of the engine (`pool_worker`, `merge_runs`) imports in a
pool worker without Beam coming with this package.
"""

import importlib

_WHERE = {
    "staging_path": "commit",
    "ExportFromTable": "exporters",
    "ExportJsonlFromTable": "exporters",
    "ExportLinesFromTable": "exporters",
    "ExportTables": "exporters",
    "Gather": "gather",
    "once": "gather",
    "jsonl_line": "jsontext",
    "POOL": "options",
    "PROCESSES": "options",
    "add_config_flags": "options",
    "JobArgumentParser": "options",
    "config_from_args": "options",
    "make_pipeline": "options",
    "parse_job_args": "options",
    "run_pipeline": "options",
    "Source": "paths",
    "expand_input": "paths",
    "input_names": "paths",
    "is_local_path": "paths",
    "join": "paths",
    "listed_inputs": "paths",
    "read_bytes": "paths",
    "write_bytes": "paths",
    "write_text": "paths",
    "iter_lines": "ranges",
    "READ_ERROR": "readers",
    "MatchInputs": "readers",
    "ReadFiles": "readers",
    "ReadLines": "readers",
    "ReadParquetRows": "readers",
    "LOCAL_RUNNERS": "report",
    "JobReport": "report",
    "default_card": "report",
    "runner_name": "report",
    "JsonlGroups": "sorted_tables",
    "TableSpec": "sorted_tables",
    "WriteJsonlGroups": "sorted_tables",
    "WriteTable": "sorted_tables",
    "WriteTables": "sorted_tables",
    "REJECTS": "stage",
    "TALLY": "stage",
    "Stage": "stage",
}

__all__ = list(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    try:  # a submodule (`pipelines.engine.pool`), as an eager package gave
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__():
    return sorted(set(globals()) | set(_WHERE))
