"""Job flags and runners: one command runs locally or on Dataflow.

- `parse_job_args`: the job's own flags via argparse (`-` and `_` alike), the rest to
  `PipelineOptions` (as Beam's wordcount does); on a local runner a flag or value that neither
  takes is a usage error (Beam would drop it with a warning; a remote runner gets it, as Beam
  passes unknown options on to the service).
- `make_pipeline`: `DirectRunner` (the default) is mapped to Beam's `FnApiRunner`, which never
  downloads a Prism binary and honours `--direct_running_mode=multi_processing
  --direct_num_workers=N`.
- `run_pipeline`: a local run uses every core (`local_workers`, pipelines.engine.pool).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import sys
import types
import typing
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import apache_beam as beam
from apache_beam.options.pipeline_options import DirectOptions, PipelineOptions, StandardOptions, TypeOptions

from pipelines.engine import pool, sorted_tables
from pipelines.engine.report import LOCAL_RUNNERS
from pipelines.engine.usage import Interrupted, deferred_interrupt, interrupted, warn


class JobArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose long options take `-` and `_` alike (`--prefix_lengths` is
    `--prefix-lengths`, `--no_x` is `--no-x`): every job's parser.

    It notes each long option as it is added (on the parser and on its argument groups) and
    rewrites a command line's options to the spelling they were added with before parsing;
    flags it does not know (Beam's) pass on unchanged. Only argparse's public API."""

    def __init__(self, *args, **kwargs):
        self.long_options: dict[str, str] = {}  # the option with every `_` made `-` -> as added
        self.single: set[str] = set()  # options that keep one value (the last one given)
        super().__init__(*args, **kwargs)

    def note(self, action: argparse.Action, kind: Any = None) -> argparse.Action:
        for option in action.option_strings:
            if option.startswith("--"):
                self.long_options[option.replace("_", "-")] = option
                if kind in (None, "store") and action.nargs not in ("*", "+"):
                    self.single.add(option)
        return action

    def add_argument(self, *args, **kwargs):
        return self.note(super().add_argument(*args, **kwargs), kwargs.get("action"))

    def add_argument_group(self, *args, **kwargs):
        return self._noting(super().add_argument_group(*args, **kwargs))

    def add_mutually_exclusive_group(self, **kwargs):
        return self._noting(super().add_mutually_exclusive_group(**kwargs))

    def _noting(self, group):
        """`group` with its add_argument noting what it adds (and so do groups made in it)."""
        add, add_exclusive = group.add_argument, group.add_mutually_exclusive_group
        group.add_argument = lambda *args, **kwargs: self.note(add(*args, **kwargs), kwargs.get("action"))
        group.add_mutually_exclusive_group = lambda **kwargs: self._noting(add_exclusive(**kwargs))
        return group

    def spelled(self, argv: Sequence[str]) -> list[str]:
        """`argv` with each known long option in its added spelling (up to a lone `--`); an
        abbreviation (argparse takes a unique prefix) in the spelling of the options it begins."""
        out, options, seen, repeated = [], True, set(), []
        for token in argv:
            if options and token == "--":
                options = False
            elif options and token.startswith("--"):
                name, eq, value = token.partition("=")
                spelled = self._spelling(name)
                token = spelled + eq + value
                if spelled in self.single:
                    if spelled in seen:  # argparse keeps the last: `--gutenberg A --gutenberg B` read B only
                        repeated.append(spelled)
                    seen.add(spelled)
            out.append(token)
        for flag in dict.fromkeys(repeated):  # a warning, not an error: scripts append overrides
            warn(f"{flag} is given more than once: only the last one counts ({self.prog})")
        return out

    def _spelling(self, name: str) -> str:
        key = name.replace("_", "-")
        added = self.long_options.get(key)
        if added is not None:
            return added
        begun = {added[: len(name)] for option, added in self.long_options.items() if option.startswith(key)}
        return begun.pop() if len(begun) == 1 and len(key) > 2 else name

    def parse_known_args(self, args=None, namespace=None):
        return super().parse_known_args(self.spelled(sys.argv[1:] if args is None else args), namespace)


def _add_unless_present(group, flag: str, **spec) -> None:
    """`group.add_argument(flag, **spec)` unless the job has its own `flag` (ChapterBreak's and
    GLGE's --shards): argparse refuses a second one with ArgumentError."""
    try:
        group.add_argument(flag, **spec)
    except argparse.ArgumentError:
        pass


def parse_job_args(parser: argparse.ArgumentParser, argv: Sequence[str] | None):
    """Split argv into (job args, PipelineOptions); a JobArgumentParser's flags take `-` or `_` alike."""
    group = parser.add_argument_group("table writing (every job)")
    _add_unless_present(
        group,
        "--shards",
        type=int,
        default=None,
        help="parquet files per table (default: one per --shard-bytes of row data)",
    )
    _add_unless_present(
        group,
        "--shard-bytes",
        type=int,
        default=sorted_tables.SHARD_BYTES,
        help=f"target uncompressed bytes per shard (default: {sorted_tables.SHARD_BYTES})",
    )
    args, beam_argv = parser.parse_known_args(argv)
    try:
        unknown = beam_unknown(beam_argv)
    except BeamFlagError as exc:  # one line, not Beam's usage of all its flags
        parser.error(str(exc))
    options = JobOptions(beam_argv)
    if unknown and options.view_as(StandardOptions).runner in LOCAL_RUNNERS:
        # Beam would drop them with a warning and the job would run without them
        parser.error(unrecognized(unknown, getattr(parser, "long_options", {}).values()))
    if isinstance(getattr(args, "output", None), str) and not args.output.strip("/ "):
        parser.error(f"argument --output: {args.output!r} names no folder")  # '' staged into ./.incomplete
    for flag in ("shards", "shard_bytes"):  # 0 or less once fell back to the default, or wrote 4,096 files
        value = getattr(args, flag, None)
        if value is not None and value < 1:
            parser.error(f"argument --{flag.replace('_', '-')}: must be at least 1 (not {value})")
    runner = options.view_as(StandardOptions).runner
    if runner not in LOCAL_RUNNERS:
        problem = runner_problem(runner)
        if problem:
            parser.error(f"argument --runner: {problem}")
    sorted_tables.SHARDING.update(
        shards=getattr(args, "shards", None), shard_bytes=getattr(args, "shard_bytes", sorted_tables.SHARD_BYTES)
    )
    return args, options


def runner_problem(runner: str) -> str | None:
    """Why Beam cannot make the runner `--runner` names (a typo: `DirectRuner`), in one line,
    or None: Beam raised it with a traceback when the pipeline was made."""
    from apache_beam.runners import create_runner

    try:
        create_runner(runner)
    except (ValueError, ImportError, AttributeError) as exc:
        first = str(exc).split(". Valid values are ")[0].strip()
        names = ("DataflowRunner", "DirectRunner", "FlinkRunner", "PortableRunner", "PrismRunner", "SparkRunner")
        close = difflib.get_close_matches(runner, names, n=1)
        return f"{first}" + (f" (did you mean {close[0]}?)" if close else "")
    return None


class BeamFlagError(ValueError):
    """A flag Beam takes, with a value it refuses (`--direct_num_workers=abc`): argparse's message."""


def beam_unknown(flags: Sequence[str]) -> list[str]:
    """The tokens of `flags` that neither the job's parser (they were left to Beam) nor any of
    Beam's options take: a mistyped flag (`--seeed 3`) or a stray value (a second file after
    `--stories`). Beam's own parser, with every options class's flags, comes to
    `get_all_options`' `add_extra_args_fn` hook and parses the flags there as it would; a value
    it refuses raises BeamFlagError (instead of its usage of every Beam flag and an exit)."""
    found: list[str] = []

    def refuse(message: str):
        raise BeamFlagError(message)

    def parse(beam_parser) -> None:
        beam_parser.error = refuse  # argparse reports a bad value through self.error
        found.extend(beam_parser.parse_known_args(list(flags))[1])

    # retain_unknown_options: keep them rather than log that they are dropped (the caller says so)
    PipelineOptions(list(flags)).get_all_options(add_extra_args_fn=parse, retain_unknown_options=True)
    return found


def unrecognized(unknown: Sequence[str], job_flags: Iterable[str]) -> str:
    """argparse's message for arguments nobody takes, with the closest known flag of the first
    unknown one (the job's, else Beam's) when one is close."""
    known = [*job_flags, *(f"--{name}" for name in PipelineOptions([]).get_all_options())]
    first = next((token.split("=", 1)[0] for token in unknown if token.startswith("--")), None)
    close = difflib.get_close_matches(first, known, n=1) if first else []
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unrecognized arguments: {' '.join(unknown)}{hint}"


POOL, PROCESSES = "pool", "processes"  # how a job's local run uses every core (run_pipeline)


class ViewsOnce(PipelineOptions):
    """PipelineOptions whose view as each options class is made once, then handed out again.

    Why: Beam asks a pipeline's options for a TypeOptions view on every transform it applies,
    and each new view parses the flags again with a new argparse parser (about 0.25 ms: 571
    views, 0.30 CPU-s, for the LOT job's graph). Every view of one options object shares its
    values (`_all_options`), so a view made once reads and writes what a new one would. Add
    no options of its own (make_pipeline views the job's options as this class)."""

    def view_as(self, cls):
        views = self.__dict__.get("_views_once")
        if views is None:
            views = {}
            object.__setattr__(self, "_views_once", views)  # PipelineOptions refuses other names
        view = views.get(cls)
        if view is None:
            view = views[cls] = super().view_as(cls)
        return view


class JobOptions(ViewsOnce):
    """A job's PipelineOptions (parse_job_args makes them from the flags Beam takes), which also
    know the names of the options given as flags, even at their default value (`given_flags`):
    `--direct_num_workers 1` asks for this process alone, while no flag lets the input's size
    choose (`local_workers`)."""

    def __init__(self, flags: Sequence[str] | None = None, **kwargs):
        super().__init__(flags, **kwargs)
        names = frozenset(
            flag.split("=", 1)[0].lstrip("-").replace("-", "_") for flag in flags or () if flag.startswith("--")
        )
        object.__setattr__(self, "given_flags", names)  # PipelineOptions refuses other names


def make_pipeline(options: PipelineOptions, local_mode: str = POOL) -> beam.Pipeline:
    """A Pipeline on the in-process FnApiRunner for local runs, else the named runner.

    Beam's construction-time type inference is off (`--no_pipeline_type_check`): it analyses
    the bytecode of every step's function while the graph is built (about 0.4 CPU-s for the
    LOT job's), and the jobs declare no type hints for it to check; elements are coded with
    Beam's generic coder either way, and GroupByKey keys are always checked deterministic.
    That coder is `coders.BlockCoder`: Beam's generic one, whose size estimates for Beam's
    metrics encode a block's first items only."""
    from pipelines.engine.coders import use_block_coder

    use_block_coder()
    if not isinstance(options, ViewsOnce):  # JobOptions are already
        options = options.view_as(ViewsOnce)  # the same values, each view made once
    options.view_as(TypeOptions).pipeline_type_check = False
    if options.view_as(StandardOptions).runner in LOCAL_RUNNERS:
        p = beam.Pipeline(runner=_local_runner(), options=options)
        setattr(p, LOCAL, {"mode": local_mode, "setups": []})
        return p
    return beam.Pipeline(options=options)


# The shell command that starts each of Beam's worker processes in its multi-process mode is
# prefixed with this: Ctrl-C reaches every process of the terminal's group, and each worker
# printed its own KeyboardInterrupt traceback. Ignored there (Python then installs no handler
# for it), it leaves the job's process to stop the run, which ends its workers. `exec` also
# leaves no shell between the runner and its worker.
WORKER_IGNORES_CTRL_C = b"trap '' INT; exec "


def _local_runner():
    """Beam's FnApiRunner, whose multi-process workers ignore Ctrl-C (WORKER_IGNORES_CTRL_C)."""
    from apache_beam.portability import python_urns
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner

    class LocalRunner(FnApiRunner):
        def run_via_runner_api(self, pipeline_proto, options):
            for env in pipeline_proto.components.environments.values():
                if env.urn == python_urns.SUBPROCESS_SDK and not env.payload.startswith(WORKER_IGNORES_CTRL_C):
                    env.payload = WORKER_IGNORES_CTRL_C + env.payload
            return super().run_via_runner_api(pipeline_proto, options)

    return LocalRunner()


SMALL_INPUT_BYTES = 4 << 20  # below this much local input, one process beats starting several
WORKERS_ENV = "STORYBENCH_WORKERS"  # the default process count of local runs (else: the cores)


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _given_flags(options: PipelineOptions) -> set[str]:
    """The option names given as flags (even at their default value, when parse_job_args made
    the options) or holding a value other than their default."""
    return set(getattr(options, "given_flags", ())) | set(options.get_all_options(drop_default=True))


def local_workers(options: PipelineOptions, input_bytes: int, mode: str = POOL) -> int:
    """Choose a local run's processes, set them up, and return their number.

    A local run of at least SMALL_INPUT_BYTES of local input uses one pool worker process per
    core (`STORYBENCH_WORKERS=N` sets N instead), and `--direct_num_workers N` asks for N: the
    pipeline itself runs in this process on the in-process runner, and every Stage's pure
    function runs on the pool (pipelines.engine.pool). A smaller input runs in this process
    alone, where starting workers (each loads the text logic and jieba's dictionary) would
    cost more than it saves; `--direct_num_workers 1` always means this process alone.
    `--direct_running_mode=multi_processing` given explicitly keeps Beam's own worker
    processes and no pool; `--direct_running_mode=in_memory` alone means this process alone.

    `mode` is the job's choice of how its local run uses the cores (PROCESSES: Beam's own
    worker processes instead of a pool; see `run_pipeline`). Outputs are the same bytes whatever the choice."""
    n, kind = _plan_workers(options, input_bytes, mode)
    direct = options.view_as(DirectOptions)
    if kind == "processes":
        pool.configure(0)
        if "direct_running_mode" not in _given_flags(options):
            direct.direct_num_workers, direct.direct_running_mode = n, "multi_processing"
        os.environ.setdefault(ARENAS_ENV, str(WORKER_ARENAS))
        return n
    if kind == "pool":
        direct.direct_num_workers, direct.direct_running_mode = 1, "in_memory"
    pool.configure(n if kind == "pool" else 0)  # a pool warmed while the graph was built is kept
    return n


def _plan_workers(options: PipelineOptions, input_bytes: int, mode: str) -> tuple[int, str]:
    """`local_workers`' choice, without setting anything: (processes, "remote" | "processes"
    | "pool"), where a pool of 1 means this process alone."""
    if options.view_as(StandardOptions).runner not in LOCAL_RUNNERS:
        return 0, "remote"
    given = _given_flags(options)
    direct = options.view_as(DirectOptions)
    if "direct_running_mode" in given and direct.direct_running_mode not in (None, "in_memory"):
        if direct.direct_running_mode == "multi_processing":
            return direct.direct_num_workers or machine_cores(), "processes"
        return direct.direct_num_workers or machine_cores(), "remote"  # another mode of Beam's: Beam's own
    if "direct_num_workers" in given:
        n = direct.direct_num_workers or machine_cores()
    elif "direct_running_mode" in given:  # in_memory, named: this process alone
        n = 1
    else:
        wanted = os.environ.get(WORKERS_ENV, "").strip()
        n = int(wanted) if wanted.isdigit() and int(wanted) > 0 else machine_cores()
        if not wanted and input_bytes < SMALL_INPUT_BYTES:
            n = 1
    if mode == PROCESSES and n > 1:
        return n, "processes"
    return n, "pool"


LOCAL = "storybench_local"  # a pipeline's attribute set by make_pipeline: {mode, setups}


def warm_setup(p: beam.Pipeline, setup: Callable) -> None:
    """While the graph is built: a pooled Stage of `p` has `setup` (loading jieba's
    dictionary takes a worker about 2 s). If `p`'s local run will have a pool (the same
    choice as `local_workers`, on the input registered so far), its workers start now and
    run every such setup while this process goes on building the graph and starting the
    runner, instead of when the stage's first records reach them. Only for pipelines made by
    `make_pipeline`; changes no output (a setup prepares a worker, it produces nothing)."""
    local = getattr(p, LOCAL, None)
    if local is None or is_dry_run(p.options):
        return
    local["setups"].append(setup)
    from pipelines.engine import progress

    n, kind = _plan_workers(p.options, progress.expected_input(p), local["mode"])
    if kind != "pool" or n < 2:
        return
    pool.configure(n)
    pool.current().warm(local["setups"])


# glibc's malloc gives each thread that allocates its own arena (up to 8 per core), and memory
# freed in one arena is not reused by another: a Beam worker process decodes its input on gRPC
# threads and processes it on another, so its heap grew with every stage's input (the stories
# job's workers reached 0.9 GB each at 80,000 stories). Two arenas per worker cut such a run's
# peak by about a fifth there (2.41 -> 1.97 GB) at no measurable cost in time. Set for the
# worker processes of Beam's own multi-process mode (they inherit the environment); a value
# the user set is kept.
ARENAS_ENV = "MALLOC_ARENA_MAX"
WORKER_ARENAS = 2


def is_dry_run(options: PipelineOptions) -> bool:
    return bool(options.get_all_options().get("dry_run"))


def run_pipeline(p: beam.Pipeline, *, commit_to: str | None = None) -> Any:
    """Run and wait; returns the PipelineResult.

    The `local_mode` given to `make_pipeline` says how a local run uses every core when no
    runner flag says otherwise: POOL (the default) runs the pipeline in this
    process and every Stage's pure function on a pool of worker processes
    (pipelines.engine.pool): memory stays that of one process plus a small worker per core,
    and the run is as much faster as the pure steps are of its work (the stories job:
    cleaning and MinHash, about two thirds). PROCESSES uses Beam's own worker processes, for
    a job whose work is mostly Beam's per-element work and grouping stages rather than its
    pure steps, at the memory of a Beam process per core (no job uses it now: ChapterBreak's
    two processes peaked at 2.5 times one's memory at x1.63; on the pool, 1.85 times at x1.74).

    With `commit_to` (the job's output, whose writers wrote to `staging_path(output)`), the
    staging folder is cleared first and, once the run finished, replaces the output's contents
    (pipelines.engine.commit). A dry run runs nothing and touches no file. Ctrl-C (or any
    KeyboardInterrupt) stops the run's workers, removes the staging folder and raises
    `usage.Interrupted` (on a remote runner, whose job is not stopped by it, the staging
    folder is left to that job); the output is left as it was (from the command line, a Ctrl-C
    during the commit is ignored: `usage.deferred_interrupt`).
    """
    from pipelines.engine import commit, progress

    dry = is_dry_run(p.options)
    if dry and p.options.view_as(StandardOptions).runner in LOCAL_RUNNERS:
        return _validate_only(p)
    if commit_to and not dry:
        commit.prepare(commit_to, **getattr(p, commit.OWNER, {}))
    local_workers(p.options, progress.expected_input(p), getattr(p, LOCAL, {}).get("mode", POOL))
    progress.start(p)
    try:
        try:
            result = p.run()
            result.wait_until_finish()
        finally:
            pool.shutdown()
            progress.stop()
    except BaseException as exc:  # Ctrl-C: the workers are stopped, then the staging folder goes
        if not (commit_to and not dry and interrupted(exc)):
            raise
        runner = p.options.view_as(StandardOptions).runner
        remote = None if runner in LOCAL_RUNNERS else runner  # its job runs on without this process
        raise Interrupted(commit_to, commit.discard(commit_to, staged=remote is None), remote) from None
    checked = getattr(getattr(result, "job", None), "proto_pipeline", None) if dry else None
    if checked is not None:  # Dataflow's dry run: the graph translated, its job request made, then it stops
        _say_dry_run(checked, "nothing was submitted or written")
    if commit_to and not dry:
        state = str(getattr(result, "state", "DONE"))
        if "DONE" not in state:
            raise RuntimeError(f"pipeline ended in state {state}; {commit_to!r} left as it was")
        with deferred_interrupt():  # never half replaced
            commit.commit(commit_to)
            _print_summary(commit_to)
    return result


def _validate_only(p: beam.Pipeline) -> None:
    """A dry run on the local runner: the graph is translated to Beam's portable form (which
    pickles every step and checks every label and coder) and nothing runs, as on Dataflow.
    The empty folder Beam made for the run (`Pipeline.local_tempdir`, removed at the end of
    `Pipeline.run`, never reached here) is removed too."""
    import shutil

    try:
        _say_dry_run(p.to_runner_api(), "nothing was run or written")
    finally:
        tempdir = getattr(p, "local_tempdir", None)
        if tempdir:
            shutil.rmtree(tempdir, ignore_errors=True)


def _say_dry_run(proto, what: str) -> None:
    """One line on stderr for a dry run: the size of the graph that was checked, and that
    nothing else happened."""
    print(
        f"dry run: the job's graph of {len(proto.components.transforms)} transforms is valid; {what}",
        file=sys.stderr,
        flush=True,
    )


def _print_summary(output: str) -> None:
    """The closing lines: each output's rows and path (from the committed stats.json)."""
    import json
    import sys

    from apache_beam.io.filesystems import FileSystems

    from pipelines.engine.paths import join
    from pipelines.engine.progress import summary

    try:
        with FileSystems.open(join(output, "stats.json")) as f:
            stats = json.loads(f.read().decode("utf-8"))
    except Exception:  # a job without stats.json has nothing to summarise
        return
    print("\n".join(summary(stats, output)), file=sys.stderr, flush=True)


def _comma_list(item: type) -> Callable[[str], tuple]:
    """Parse `a,b,c` into a tuple of `item`s; an empty or mistyped part is a usage error."""

    def parse(text: str) -> tuple:
        parts = text.split(",")
        if any(not part.strip() for part in parts):
            raise argparse.ArgumentTypeError(f"empty item in {text!r}")
        try:
            return tuple(item(part) for part in parts)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated {item.__name__} values, got {text!r}") from None

    parse.__name__ = f"comma-separated {item.__name__}"
    return parse


def _flag_type(hint: Any) -> tuple[Callable[[str], Any] | None, bool]:
    """(argparse type, is_bool) for a Config field's type hint."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
        return _flag_type(args[0])
    if hint is bool:
        return None, True
    if typing.get_origin(hint) is tuple:
        return _comma_list(args[0] if args else str), False
    return (hint if hint in (int, float, str) else str), False


class _BooleanFlag(argparse.BooleanOptionalAction):
    """`--x` sets True; `--no-x` and `--no_x` set False (argparse knows only `--no-`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, not option_string.startswith(("--no-", "--no_")))


def add_config_flags(
    parser: argparse.ArgumentParser, cls: type, *, prefix: str = "", exclude: Sequence[str] = ()
) -> None:
    """One flag per field of a frozen `*Config` dataclass, so its default lives in one place.

    `--{prefix}{field}` (with `-` or `_`); help comes from `field.metadata["help"]`, choices
    from `metadata["choices"]`; booleans get `--x` / `--no-x`; tuples are comma-separated.
    """
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        if field.name in exclude:
            continue
        flag = f"--{prefix}{field.name}".replace("_", "-")
        kind, is_bool = _flag_type(hints[field.name])
        default = field.default if field.default is not dataclasses.MISSING else field.default_factory()
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
        text = f"{field.metadata.get('help', field.name.replace('_', ' '))} (default: {shown})"
        dest = f"{prefix}{field.name}".replace("-", "_")
        if is_bool:
            parser.add_argument(flag, dest=dest, action=_BooleanFlag, default=default, help=text)
        else:
            low, high, items = (field.metadata.get(k) for k in ("min", "max", "item_choices"))
            if low is not None or high is not None or items is not None:
                kind = _bounded(kind, low, high, items)
            parser.add_argument(
                flag, dest=dest, type=kind, default=default, help=text, choices=field.metadata.get("choices")
            )


def _bounded(
    kind: Callable[[str], Any], low: float | None, high: float | None, items: Sequence[str] | None = None
) -> Callable[[str], Any]:
    """`kind`, refusing a value (or, for a comma list, an item) below `low` or above `high`, or
    an item of a comma list not in `items` (a Config field's metadata "min", "max" and
    "item_choices"): `--n -1` once printed a "-1-gram overlap", `--max-story-chars -5`
    rejected every story and `--heading-styles chapters` found no chapter, each with exit 0."""

    def parse(text: str):
        value = kind(text)
        for item in value if isinstance(value, tuple) else (value,):
            if items is not None and item not in items:
                raise argparse.ArgumentTypeError(f"{item!r} is not one of {', '.join(items)}")
            if items is None and ((low is not None and item < low) or (high is not None and item > high)):
                bounds = f"from {low} to {high}" if low is not None and high is not None else None
                bounds = bounds or (f"at least {low}" if low is not None else f"at most {high}")
                raise argparse.ArgumentTypeError(f"must be {bounds} (not {item if isinstance(value, tuple) else text})")
        return value

    parse.__name__ = kind.__name__
    return parse


def config_from_args(args: argparse.Namespace, cls: type, *, prefix: str = "", **overrides: Any):
    """The `cls` instance the flags of `add_config_flags(parser, cls, prefix=...)` describe."""
    values = {
        f.name: getattr(args, f"{prefix}{f.name}".replace("-", "_"))
        for f in dataclasses.fields(cls)
        if hasattr(args, f"{prefix}{f.name}".replace("-", "_"))
    }
    values.update(overrides)
    return cls(**values)
