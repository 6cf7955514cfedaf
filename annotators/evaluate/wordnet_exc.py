"""ROUGE-1.5.5's WordNet exception database: which one the summarisation scores use.

With `-m`, ROUGE-1.5.5 looks every token of more than 3 characters up in
`data/WordNet-2.0.exc.db` first and takes the base form it finds there (unstemmed) instead of
its Porter stem ("children" -> "child"). Which db an installation has changes the scores:

- `empty` (the default): the db files2rouge ships, which holds no keys. GLGE's evaluation
  environment (pltrdy/pyrouge and files2rouge, PEERS.md 3.5) had it, so no exception applies.
- `rebuilt`: the db many installations rebuild with ROUGE's `buildExeptionDB.pl` from
  WordNet 2.0's exception lists (adj, adv, noun, verb `.exc`: 5,930 keys). It is built here
  offline from lists already on this machine (`find_sources`): a path the user names
  (`--rouge-wordnet-exc`: an `.exc` file, a folder or a zip of them), else
  `$ROUGE_EVAL_HOME/WordNet-2.0-Exceptions`, files2rouge's copy
  (`~/.files2rouge/data/WordNet-2.0-Exceptions`), pyrouge's (`home_dir` of
  `~/.pyrouge/settings.ini` + `/data/WordNet-2.0-Exceptions`), then NLTK's WordNet corpus
  (WordNet 3.0's lists: a different key count, which the card shows).

The lists are read as the perl builder reads them: every line split on whitespace, its first
field the key and its second the value (further base forms ignored), a later line or file
overwriting an earlier key. The builder reads the files in directory order; here they are
read in name order (adj, adv, noun, verb), so the 4 keys WordNet 2.0 lists with two different
bases (best and better: adj good, adv well; is: noun is, verb be; testes: noun testis, verb
testes) take the later file's; a rebuild whose directory listed the files otherwise differs there.
Nothing is downloaded; reading local files is all this module does.
"""

from __future__ import annotations

import configparser
import dataclasses
import hashlib
import os
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

CHOICES = ("empty", "rebuilt")
FOLDER = "WordNet-2.0-Exceptions"
WORDNET_2_0_KEYS = 5930
EMPTY_SOURCE = "files2rouge's shipped WordNet-2.0.exc.db (no keys; GLGE's environment)"


@dataclasses.dataclass(frozen=True)
class ExceptionDb:
    """The exception db a run uses: token -> base form, and where it came from."""

    choice: str
    mapping: Mapping[str, str]
    source: str
    files: tuple[str, ...] = ()

    def describe(self) -> dict:
        """What stats.json and the card record."""
        lines = "".join(f"{k}\t{v}\n" for k, v in sorted(self.mapping.items()))
        return {
            "choice": self.choice,
            "source": self.source,
            "files": list(self.files),
            "keys": len(self.mapping),
            "sha256": hashlib.sha256(lines.encode("utf-8")).hexdigest(),
        }


def parse_exceptions(files: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The db `buildExeptionDB.pl` builds from (name, text) of each list, in the given order."""
    db: dict[str, str] = {}
    for _, text in files:
        for line in text.splitlines():
            fields = line.split()
            if len(fields) >= 2:
                db[fields[0]] = fields[1]
    return db


def _read_folder(folder: Path) -> list[tuple[str, str]]:
    return [
        (str(f), f.read_text(encoding="utf-8", errors="replace")) for f in sorted(folder.glob("*.exc")) if f.is_file()
    ]


def _read_zip(path: Path) -> list[tuple[str, str]]:
    with zipfile.ZipFile(path) as z:
        names = sorted((n for n in z.namelist() if n.endswith(".exc")), key=lambda n: (n.rsplit("/", 1)[-1], n))
        return [(f"{path}!{n}", z.read(n).decode("utf-8", errors="replace")) for n in names]


def read_lists(path: Path) -> list[tuple[str, str]]:
    """(name, text) of the exception lists at `path`: one `.exc` file, a folder of them, or a zip."""
    if path.is_dir():
        return _read_folder(path)
    if path.is_file() and zipfile.is_zipfile(path):
        return _read_zip(path)
    if path.is_file():
        return [(str(path), path.read_text(encoding="utf-8", errors="replace"))]
    return []


def _pyrouge_folder() -> Path | None:
    settings = Path.home() / ".pyrouge" / "settings.ini"
    if not settings.is_file():
        return None
    parser = configparser.ConfigParser()
    try:
        parser.read(settings, encoding="utf-8")
        home = parser.get("pyrouge settings", "home_dir")
    except (configparser.Error, UnicodeDecodeError):
        return None
    return Path(home) / "data" / FOLDER


def _nltk_paths() -> list[Path]:
    try:
        import nltk.data
    except ImportError:
        return []
    out = []
    for root in nltk.data.path:
        out += [Path(root) / "corpora" / "wordnet", Path(root) / "corpora" / "wordnet.zip"]
    return out


def candidates() -> list[tuple[str, Path]]:
    """Where installed exception lists are looked for, in order (nothing named by the user)."""
    out = []
    if os.environ.get("ROUGE_EVAL_HOME"):
        out.append(("ROUGE_EVAL_HOME", Path(os.environ["ROUGE_EVAL_HOME"]) / FOLDER))
    out.append(("files2rouge", Path.home() / ".files2rouge" / "data" / FOLDER))
    pyrouge = _pyrouge_folder()
    if pyrouge is not None:
        out.append(("pyrouge", pyrouge))
    out += [("NLTK wordnet corpus", p) for p in _nltk_paths()]
    return out


def find_sources(explicit: str = "") -> tuple[str, list[tuple[str, str]]] | None:
    """(where, lists) of the first place holding exception lists: `explicit` alone when given."""
    places = [("--rouge-wordnet-exc", Path(explicit))] if explicit else candidates()
    for where, path in places:
        lists = read_lists(path)
        if lists:
            return f"{where}: {path}", lists
    return None


def problem(choice: str, explicit: str = "") -> str | None:
    """Why this choice cannot be built here, or None."""
    if choice == "empty":
        return "--rouge-wordnet-exc names exception lists for --rouge-wordnet rebuilt" if explicit else None
    if find_sources(explicit) is None:
        if explicit:
            return f"--rouge-wordnet-exc {explicit}: no WordNet exception list (.exc) there"
        looked = ", ".join(str(p) for _, p in candidates())
        return (
            "--rouge-wordnet rebuilt needs WordNet's exception lists (adj.exc, adv.exc, noun.exc, "
            f"verb.exc, e.g. ROUGE-1.5.5's data/{FOLDER}); none found in {looked}: "
            "name them with --rouge-wordnet-exc PATH"
        )
    return None


def load(choice: str, explicit: str = "") -> ExceptionDb:
    """The db of `choice` (`problem` first: `rebuilt` without lists raises ValueError)."""
    if choice == "empty":
        return ExceptionDb("empty", {}, EMPTY_SOURCE)
    found = find_sources(explicit)
    if found is None:
        raise ValueError(problem(choice, explicit))
    where, lists = found
    return ExceptionDb("rebuilt", parse_exceptions(lists), where, tuple(name for name, _ in lists))
