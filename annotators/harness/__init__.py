"""lm-evaluation-harness tasks for the built benchmarks (issue 32): the `lm_eval/` folder a LOT
or ChapterBreak output carries (task YAML + `utils.py`), made from the job's stats.

`lot.attachments(stats)` / `chapterbreak.attachments(stats)` -> ({path: text}, summary);
`task_utils.py` is the folder's `utils.py` (data loading relative to the folder, the OutGen
metrics imported from annotators.evaluate). Pure text: no Beam, no network, no lm_eval import.
"""
