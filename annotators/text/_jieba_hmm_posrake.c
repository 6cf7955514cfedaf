#include "_jieba_hmm.h"

/* ---------------------------------------------------------------------------------------
 * posrake_scored(tagged, delimiting_tags, breaks, break_of, max_words) -> dict
 *
 * annotators/lot/outline.py's posrake_phrases + _frequencies_and_degrees + posrake_scored over
 * one story's jieba.posseg (word, tag) pairs, which measured about 0.4 us a pair in Python
 * (the largest part of an OutGen example's cost once the cut ran in C):
 * - a pair ends the current run when its tag is in `delimiting_tags`, else when
 *   breaks[word] is true (a word not in `breaks` is given break_of(word), stored there);
 *   a run a pair closes is a phrase (a run nothing closes is not);
 * - a word's frequency is how often it occurs in the phrases, its degree the summed lengths of
 *   the phrases it occurs in (once per occurrence);
 * - {phrase joined: (sum over its words of degree / frequency, its words)} of the phrases of at
 *   most `max_words` words, in first-met order, the last run of a string giving its value;
 *   the additions in the words' order from 0.0, each ratio one true division of two ints
 *   (exact doubles), so the same floats as Python's loop.
 * ------------------------------------------------------------------------------------- */

typedef struct {
    Py_ssize_t start, len; /* pair indices of a phrase */
} Run;

PyObject *
jh_posrake_scored(PyObject *self, PyObject *args)
{
    PyObject *tagged, *delim_tags, *breaks, *break_of, *seq = NULL, *slots = NULL, *out = NULL, *empty = NULL;
    Py_ssize_t max_words;
    if (!PyArg_ParseTuple(args, "OO!O!On", &tagged, &PyFrozenSet_Type, &delim_tags, &PyDict_Type, &breaks, &break_of,
                          &max_words))
        return NULL;
    if ((seq = PySequence_Fast(tagged, "posrake_scored() takes a sequence of (word, tag) pairs")) == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), n_runs = 0, n_words = 0, start = 0, len = 0;
    PyObject **pairs = PySequence_Fast_ITEMS(seq);
    Run *runs = PyMem_New(Run, n / 2 + 1);
    Py_ssize_t *slot_of = PyMem_New(Py_ssize_t, n + 1); /* pair index -> its word's slot */
    long long *freq = PyMem_New(long long, n + 1), *degree = PyMem_New(long long, n + 1);
    if (runs == NULL || slot_of == NULL || freq == NULL || degree == NULL || (slots = PyDict_New()) == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = pairs[i];
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(pair, 0))) {
            PyErr_SetString(PyExc_TypeError, "posrake_scored() takes (word, tag) pairs of str");
            goto done;
        }
        PyObject *word = PyTuple_GET_ITEM(pair, 0);
        int end = PySet_Contains(delim_tags, PyTuple_GET_ITEM(pair, 1));
        if (end == 0) {
            PyObject *b = PyDict_GetItemWithError(breaks, word);
            if (b != NULL) {
                end = PyObject_IsTrue(b);
            } else if (!PyErr_Occurred()) {
                b = PyObject_CallOneArg(break_of, word);
                if (b == NULL || PyDict_SetItem(breaks, word, b) < 0) {
                    Py_XDECREF(b);
                    goto done;
                }
                end = PyObject_IsTrue(b);
                Py_DECREF(b);
            } else {
                end = -1;
            }
        }
        if (end < 0)
            goto done;
        if (end) {
            if (len) {
                runs[n_runs].start = start;
                runs[n_runs++].len = len;
            }
            len = 0;
        } else if (len++ == 0) {
            start = i;
        }
    }
    /* each phrase word's slot; the frequencies and degrees */
    for (Py_ssize_t r = 0; r < n_runs; r++) {
        for (Py_ssize_t i = runs[r].start; i < runs[r].start + runs[r].len; i++) {
            PyObject *word = PyTuple_GET_ITEM(pairs[i], 0);
            PyObject *got = PyDict_GetItemWithError(slots, word);
            Py_ssize_t slot;
            if (got != NULL) {
                slot = PyLong_AsSsize_t(got);
            } else {
                if (PyErr_Occurred())
                    goto done;
                PyObject *k = PyLong_FromSsize_t(n_words);
                int rc = k != NULL ? PyDict_SetItem(slots, word, k) : -1;
                Py_XDECREF(k);
                if (rc < 0)
                    goto done;
                slot = n_words++;
                freq[slot] = degree[slot] = 0;
            }
            slot_of[i] = slot;
            freq[slot] += 1;
            degree[slot] += runs[r].len;
        }
    }
    if ((out = PyDict_New()) == NULL || (empty = PyUnicode_New(0, 0)) == NULL)
        goto fail;
    for (Py_ssize_t r = 0; r < n_runs; r++) {
        if (runs[r].len > max_words)
            continue;
        double score = 0.0;
        PyObject *words = PyTuple_New(runs[r].len);
        if (words == NULL)
            goto fail;
        for (Py_ssize_t k = 0; k < runs[r].len; k++) {
            Py_ssize_t i = runs[r].start + k, slot = slot_of[i];
            score += (double)degree[slot] / (double)freq[slot];
            PyObject *word = PyTuple_GET_ITEM(pairs[i], 0);
            Py_INCREF(word);
            PyTuple_SET_ITEM(words, k, word);
        }
        PyObject *phrase = PyUnicode_Join(empty, words);
        PyObject *value = phrase != NULL ? Py_BuildValue("(dO)", score, words) : NULL;
        int rc = value != NULL ? PyDict_SetItem(out, phrase, value) : -1;
        Py_XDECREF(value);
        Py_XDECREF(phrase);
        Py_DECREF(words);
        if (rc < 0)
            goto fail;
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyMem_Free(runs);
    PyMem_Free(slot_of);
    PyMem_Free(freq);
    PyMem_Free(degree);
    Py_XDECREF(slots);
    Py_XDECREF(empty);
    Py_DECREF(seq);
    return out;
}
