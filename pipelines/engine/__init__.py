"""The engine every job shares: readers, writers, `Stage`, `JobReport`, job flags and runners.

Jobs import from here only; text logic stays in `annotators/`.
"""

from pipelines.engine.commit import staging_path
from pipelines.engine.exporters import ExportFromTable, ExportJsonlFromTable, ExportLinesFromTable, ExportTables
from pipelines.engine.gather import Gather, once
from pipelines.engine.jsontext import jsonl_line
from pipelines.engine.options import (
    POOL,
    PROCESSES,
    add_config_flags,
    alias_separators,
    config_from_args,
    make_pipeline,
    parse_job_args,
    run_pipeline,
)
from pipelines.engine.paths import (
    Source,
    expand_input,
    input_names,
    is_local_path,
    join,
    listed_inputs,
    read_bytes,
    write_bytes,
    write_text,
)
from pipelines.engine.ranges import iter_lines
from pipelines.engine.readers import READ_ERROR, MatchInputs, ReadFiles, ReadLines, ReadParquetRows
from pipelines.engine.report import LOCAL_RUNNERS, JobReport, default_card, runner_name
from pipelines.engine.sorted_tables import TableSpec, WriteJsonlGroups, WriteTable, WriteTables
from pipelines.engine.stage import REJECTS, TALLY, Stage

__all__ = [
    "POOL",
    "PROCESSES",
    "Gather",
    "once",
    "READ_ERROR",
    "ExportFromTable",
    "ExportJsonlFromTable",
    "ExportLinesFromTable",
    "ExportTables",
    "MatchInputs",
    "Source",
    "ReadFiles",
    "ReadLines",
    "ReadParquetRows",
    "WriteJsonlGroups",
    "TableSpec",
    "WriteTable",
    "WriteTables",
    "expand_input",
    "input_names",
    "is_local_path",
    "listed_inputs",
    "iter_lines",
    "join",
    "jsonl_line",
    "read_bytes",
    "write_bytes",
    "write_text",
    "LOCAL_RUNNERS",
    "JobReport",
    "default_card",
    "runner_name",
    "REJECTS",
    "TALLY",
    "Stage",
    "parse_job_args",
    "make_pipeline",
    "run_pipeline",
    "add_config_flags",
    "alias_separators",
    "config_from_args",
    "staging_path",
]
