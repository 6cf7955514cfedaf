/*
 * _jieba_hmm: jieba 0.42.1's two HMMs for runs of unknown Han characters, in C.
 *
 * What no library does exactly (rjieba's HMM step and its tag() differ from jieba's): the
 * part-of-speech HMM of jieba.posseg (jieba/posseg/viterbi.py, grouped into (word, tag) pairs
 * as POSTokenizer's __cut does) and the B/M/E/S HMM of jieba.finalseg (the HMM step of
 * jieba.lcut, grouped into words as finalseg's __cut does). annotators/text/zh_posseg.py and
 * zh_tokens.py call it; without this module (no compiler at install time, or
 * STORYBENCH_ZH_NATIVE=0) they run jieba's own Python code, which gives the same output.
 *
 *   posseg_model(states, char_state, start, trans, emit) -> capsule
 *       states: every (position, tag) tuple, sorted as Python sorts them; the other four are
 *       jieba.posseg's tables (char_state_tab_P, start_P, trans_P, emit_P).
 *   posseg_cut(model, text) -> [(word, tag), ...] for a string of Han characters.
 *   finalseg_model(start, trans, emit) -> capsule (jieba.finalseg's start_P, trans_P, emit_P)
 *   finalseg_cut(model, text) -> [word, ...] for a string of Han characters.
 *
 * Files: _jieba_hmm_tables.c (posseg's tables -> a model), _jieba_hmm_posseg.c (posseg's
 * Viterbi), _jieba_hmm_finalseg.c (finalseg's), this file (the module); _jieba_hmm.h.
 *
 * posseg:
 * Each step follows viterbi.py: previous states that have transitions; the states they may
 * lead to; of those, the ones the character allows (char_state_tab), else all that may
 * follow, else every state; each scored (V[t-1][y0] + trans(y0, y, -inf)) + emit(y, char,
 * -3.14e100), the best previous state kept, ties to the larger state (Python's max over
 * (prob, state) tuples; states are numbered in sorted order). The same additions in the same
 * order as Python's floats, so the same path.
 */
#include "_jieba_hmm.h"

static PyMethodDef methods[] = {
    {"posseg_model", jh_posseg_model, METH_VARARGS,
     "posseg_model(states, char_state, start, trans, emit) -> jieba.posseg's HMM tables, for posseg_cut()"},
    {"posseg_cut", jh_posseg_cut, METH_VARARGS,
     "posseg_cut(model, text) -> [(word, tag), ...]: jieba.posseg's Viterbi over a run of Han characters"},
    {"finalseg_model", jh_finalseg_model, METH_VARARGS,
     "finalseg_model(start, trans, emit) -> jieba.finalseg's HMM tables, for finalseg_cut()"},
    {"finalseg_cut", jh_finalseg_cut, METH_VARARGS,
     "finalseg_cut(model, text) -> [word, ...]: jieba.finalseg's Viterbi over a run of Han characters"},
    {"walk", jh_walk, METH_VARARGS,
     "walk(tokens, freq, tags, vocab, on_cache, on_miss, pos_cache, pos_miss[, ends]) -> (words, pairs): jieba's "
     "HMM-on words (whitespace left out, interned; with ends, a tuple per sentence) and posseg's pairs from "
     "the HMM-off tokens along jieba's route (joined letters and digits one by one), or None where the route is "
     "unsure or sentences meet inside a block"},
    {"posrake_scored", jh_posrake_scored, METH_VARARGS,
     "posrake_scored(tagged, delimiting_tags, breaks, break_of, max_words) -> {phrase: (RAKE score, words)}: "
     "annotators.lot.outline.posrake_scored over one story's posseg pairs"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_jieba_hmm",
                                    "jieba's HMMs (posseg, finalseg) for unknown Han runs (see zh_posseg.py)", -1, methods};

PyMODINIT_FUNC
PyInit__jieba_hmm(void)
{
    return PyModule_Create(&module);
}
