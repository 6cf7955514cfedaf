"""The evaluate job's settings (issue 16); flags come from `EvalConfig` (add_config_flags)."""

from __future__ import annotations

import dataclasses

from annotators.evaluate import wordnet_exc
from annotators.evaluate.glge_metrics import GLGE_TASKS, QG_TASKS, SUMMARY_TASKS

LOT_TASKS = ("clozet", "senpos", "plotcom", "outgen")
TASKS = LOT_TASKS + ("chapterbreak",) + GLGE_TASKS
ACCURACY_TASKS = ("clozet", "senpos")
GENERATION_TASKS = ("plotcom", "outgen")
# The field holding the answer, in predictions and gold alike (PEERS.md 1.2: predictions are
# "the same format as test.jsonl" with the model's answer in label, plot or story).
ANSWER_FIELD = {
    "clozet": "label",
    "senpos": "label",
    "plotcom": "plot",
    "outgen": "story",
    "chapterbreak": "scores",
    **{t: "text" for t in GLGE_TASKS},
}


def _field(default, text: str, choices=None):
    meta = {"help": text}
    if choices:
        meta["choices"] = choices
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    task: str = _field("outgen", "the task the predictions answer (LOT, chapterbreak or a GLGE task)", TASKS)
    compat: str = _field(
        "original",
        "original: the official scripts' numbers, quirks included "
        "(PEERS.md 1.5); clean: the corrected variants (see CARD.md)",
        ("original", "clean"),
    )
    align: str = _field(
        "line",
        "how predictions meet gold examples: line (prediction line N <-> gold "
        "example N, as the official script) or id (their `example_id` or `id` fields); "
        "chapterbreak always aligns by id",
        ("line", "id"),
    )
    split: str = _field("test", "the split taken from a gold table (a gold .jsonl file is taken whole)")
    source: str = _field(
        "",
        "GLGE question generation: the source file ({split}.src, one line per gold "
        "line); --compat original needs it, as the official script groups examples by "
        "their source sentence",
    )
    rouge_wordnet: str = _field(
        "empty",
        "ROUGE-1.5.5's WordNet exception db for the summarisation tasks' "
        "--compat original (cnndm, gigaword, xsum, msnews): empty (the db files2rouge "
        "ships, no keys: GLGE's environment) or rebuilt (WordNet's exception lists, as "
        "buildExeptionDB.pl builds it: 5,930 keys from WordNet 2.0's; see "
        "--rouge-wordnet-exc)",
        wordnet_exc.CHOICES,
    )
    rouge_wordnet_exc: str = _field(
        "",
        "--rouge-wordnet rebuilt: the exception lists (an .exc file, a folder "
        "or a zip of them); default: the first found of $ROUGE_EVAL_HOME/"
        "WordNet-2.0-Exceptions, files2rouge's and pyrouge's ROUGE data, NLTK's "
        "wordnet corpus",
    )

    def uses_rouge155(self) -> bool:
        """Whether the scores come from ROUGE-1.5.5 (and so from its WordNet exception db)."""
        return self.task in SUMMARY_TASKS and self.compat == "original"

    def metric_libraries(self) -> dict[str, str]:
        """The metric libraries this task and mode score with, and their installed versions
        (sacrebleu: its signature, which names its settings)."""
        from importlib.metadata import version

        names: list[str] = []
        if self.task in GENERATION_TASKS + ("personachat",):
            names.append("nltk")  # sentence BLEU (and PersonaChat's method7)
        if self.task in QG_TASKS and self.compat == "original":
            names.append("pycocoevalcap")  # BLEU-1..4 and ROUGE-L; METEOR is its jar
        if self.task in SUMMARY_TASKS + QG_TASKS and self.compat == "clean":
            names.append("rouge-score")
        out = {name: version(name) for name in names}
        if self.task in QG_TASKS and self.compat == "clean":
            from annotators.evaluate.glge_metrics import sacrebleu_signature

            out["sacrebleu"] = sacrebleu_signature()
        return out

    def effective_align(self) -> str:
        """chapterbreak always aligns by id, GLGE's plain-text lines always by line."""
        if self.task == "chapterbreak":
            return "id"
        return "line" if self.task in GLGE_TASKS else self.align

    def problem(self) -> str | None:
        """Why this combination cannot run, or None."""
        if self.rouge_wordnet != "empty" and not self.uses_rouge155():
            return (
                f"--rouge-wordnet {self.rouge_wordnet} is read by ROUGE-1.5.5, which scores "
                f"{', '.join(SUMMARY_TASKS)} with --compat original, not {self.task} --compat {self.compat}"
            )
        wordnet = wordnet_exc.problem(self.rouge_wordnet, self.rouge_wordnet_exc)
        if wordnet:
            return wordnet
        if self.source and self.task not in QG_TASKS:
            return f"--source is read for GLGE question generation only, not for {self.task}"
        if self.task in QG_TASKS and self.compat == "original":
            if not self.source:
                return (
                    f"--compat original for {self.task} needs --source (the {self.split}.src file): "
                    "the official script groups examples by their source sentence"
                )
            from annotators.evaluate import meteor

            missing = meteor.problem()
            if missing:
                return f"--compat original for {self.task} reports METEOR: {missing}"
        return None
