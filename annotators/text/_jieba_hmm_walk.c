#include "_jieba_hmm.h"

/* ---------------------------------------------------------------------------------------
 * walk(tokens, freq, tags, vocab, on_cache, on_miss, pos_cache, pos_miss[, ends]) -> (words, pairs)
 *
 * jieba's HMM-on words and jieba.posseg's (word, tag) pairs of a stretch from its HMM-off
 * tokens (rjieba's, which are jieba's route words in blocks of Han characters; jieba's HMM-off
 * cut joins single ASCII letters and digits, so a token of two or more of them is taken as its
 * characters, and None is returned when such a token is a dictionary word, freq.get(token)
 * truthy: the route is then unsure; zh_tokens.Segmenter._route): the loop of
 * zh_tokens.Segmenter._walk_both, which measured about 2.3 us per token in Python, 70% of the
 * LOT build's cut.
 *
 * A token of one character in U+4E00..U+9FD5 or one ASCII letter or digit is a route step
 * and joins the current run; any other token ends the run and is itself a word and a pair
 * (tag "x" when it is one character or "\r\n", else tags.get(token, "x")). A run of one
 * character is a word (tag from tags); a longer run that is a dictionary word (freq.get(run)
 * truthy) is its characters; any other is an unknown run: its words are on_cache[run], else
 * on_miss(run), and its pairs pos_cache[run], else pos_miss(run) (the callers' finalseg and
 * posseg HMMs, which fill the caches).
 *
 * `words` leaves out the tokens that are all whitespace (str.strip() == "") and holds every
 * word interned; the pairs share those string objects. `vocab` (word -> its pair, filled
 * here; the caller bounds its size) makes a word seen before cost one look-up: in the large
 * dictionaries (tags, and the interned strings) every look-up is a cache miss.
 *
 * With `ends` (the sentences' end offsets in the tokens' text, ascending), `words` is a list of
 * one tuple of words per sentence, each sentence walked on its own (a run ends where its
 * sentence does), as walking each sentence's own tokens gives them; None when that cannot be
 * so: a token runs across a sentence's end, or two sentences meet inside a jieba block (the
 * characters on both sides in [\u4e00-\u9fd5a-zA-Z0-9+#&._%-]), where cutting the whole text
 * may differ from cutting each sentence.
 * ------------------------------------------------------------------------------------- */

typedef struct {
    PyObject *freq, *tags, *vocab, *on_cache, *on_miss, *pos_cache, *pos_miss;
    PyObject *words, *pairs, *x;
} Walk;

static int
all_space(PyObject *s)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    int kind = PyUnicode_KIND(s);
    const void *data = PyUnicode_DATA(s);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)))
            return 0;
    return 1;
}

/* whether a token of two or more characters is ASCII letters and digits only (jieba's HMM-off
 * cut joins them; its route holds them one by one) */
static int
letters_digits(PyObject *t)
{
    if (!PyUnicode_IS_ASCII(t))
        return 0;
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(t);
    Py_ssize_t n = PyUnicode_GET_LENGTH(t);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS1 c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return 0;
    }
    return n > 1;
}

/* whether a one-character token is a step of jieba's route: a Han character or an ASCII
 * letter or digit (which lie in jieba's blocks) */
static int
route_step(Py_UCS4 c)
{
    return (c >= 0x4E00 && c <= 0x9FD5) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* the pair (word, tag) of a word, borrowed from the vocabulary (made there on first sight:
 * the word interned, its tag "x" for one character that is no route step or "\r\n", else
 * tags.get(word, "x")); `word` is borrowed */
static PyObject *
pair_of(Walk *w, PyObject *word)
{
    PyObject *pair = PyDict_GetItemWithError(w->vocab, word);
    if (pair != NULL || PyErr_Occurred())
        return pair;
    PyObject *tag = w->x;
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    Py_UCS4 c = n == 1 ? PyUnicode_READ_CHAR(word, 0) : 0;
    if ((n == 1 && route_step(c)) || (n > 1 && PyUnicode_CompareWithASCIIString(word, "\r\n") != 0)) {
        tag = PyDict_GetItemWithError(w->tags, word);
        if (tag == NULL) {
            if (PyErr_Occurred())
                return NULL;
            tag = w->x;
        }
    }
    Py_INCREF(word);
    PyUnicode_InternInPlace(&word);
    pair = PyTuple_Pack(2, word, tag);
    Py_DECREF(word);
    if (pair == NULL)
        return NULL;
    int rc = PyDict_SetItem(w->vocab, PyTuple_GET_ITEM(pair, 0), pair);
    Py_DECREF(pair); /* the vocabulary holds it */
    return rc < 0 ? NULL : pair;
}

/* a word (borrowed) onto both lists, as its vocabulary pair */
static int
emit(Walk *w, PyObject *word)
{
    PyObject *pair = pair_of(w, word);
    if (pair == NULL)
        return -1;
    PyObject *interned = PyTuple_GET_ITEM(pair, 0);
    if (!all_space(interned) && PyList_Append(w->words, interned) < 0)
        return -1;
    return PyList_Append(w->pairs, pair);
}

/* a new reference: cache[run], else miss(run) */
static PyObject *
cached(PyObject *cache, PyObject *miss, PyObject *run)
{
    PyObject *got = PyDict_GetItemWithError(cache, run);
    if (got != NULL) {
        Py_INCREF(got);
        return got;
    }
    return PyErr_Occurred() ? NULL : PyObject_CallOneArg(miss, run);
}

static int
extend_interned(PyObject *list, PyObject *items)
{
    PyObject *seq = PySequence_Fast(items, "on_miss must give a sequence of words");
    if (seq == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *word = PySequence_Fast_GET_ITEM(seq, i);
        Py_INCREF(word);
        PyUnicode_InternInPlace(&word);
        int rc = all_space(word) ? 0 : PyList_Append(list, word);
        Py_DECREF(word);
        if (rc < 0) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return 0;
}

/* a run of single-character route steps (borrowed) */
static int
flush(Walk *w, PyObject *run)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(run);
    if (len == 1)
        return emit(w, run);
    PyObject *f = PyDict_GetItemWithError(w->freq, run);
    int known = f != NULL ? PyObject_IsTrue(f) : (PyErr_Occurred() ? -1 : 0);
    if (known < 0)
        return -1;
    if (known) { /* a dictionary word walked as its characters */
        for (Py_ssize_t i = 0; i < len; i++) {
            PyObject *word = PyUnicode_Substring(run, i, i + 1);
            int rc = word != NULL ? emit(w, word) : -1;
            Py_XDECREF(word);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    PyObject *on = cached(w->on_cache, w->on_miss, run);
    PyObject *pos = on != NULL ? cached(w->pos_cache, w->pos_miss, run) : NULL;
    int rc = -1;
    if (pos != NULL && extend_interned(w->words, on) == 0) {
        PyObject *seq = PySequence_Fast(pos, "pos_miss must give a sequence of pairs");
        if (seq != NULL) {
            rc = 0;
            for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(seq); i++)
                rc = PyList_Append(w->pairs, PySequence_Fast_GET_ITEM(seq, i));
            Py_DECREF(seq);
        }
    }
    Py_XDECREF(on);
    Py_XDECREF(pos);
    return rc;
}

/* whether a character is in jieba's blocks ([\u4e00-\u9fd5a-zA-Z0-9+#&._%-]) */
static int
block_char(Py_UCS4 c)
{
    return (c >= 0x4E00 && c <= 0x9FD5) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c < 128 && strchr("+#&._%-", (int)c) != NULL && c != 0);
}

/* the current sentence's words, as a tuple, onto `sentences`; a new list for the next one */
static int
close_sentence(Walk *w, PyObject *sentences)
{
    PyObject *words = PyList_AsTuple(w->words);
    if (words == NULL)
        return -1;
    int rc = PyList_Append(sentences, words);
    Py_DECREF(words);
    if (rc < 0)
        return -1;
    Py_SETREF(w->words, PyList_New(0));
    return w->words == NULL ? -1 : 0;
}

PyObject *
jh_walk(PyObject *self, PyObject *args)
{
    PyObject *tokens, *ends = Py_None, *sentences = NULL, *out = NULL;
    Walk w = {0};
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!OO!O|O", &PyList_Type, &tokens, &PyDict_Type, &w.freq, &PyDict_Type, &w.tags,
                          &PyDict_Type, &w.vocab, &PyDict_Type, &w.on_cache, &w.on_miss, &PyDict_Type, &w.pos_cache,
                          &w.pos_miss, &ends))
        return NULL;
    if (ends != Py_None && !PyList_Check(ends)) {
        PyErr_SetString(PyExc_TypeError, "walk() takes its sentences' ends as a list of int");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(tokens), n_ends = ends != Py_None ? PyList_GET_SIZE(ends) : 0, si = 0, at = 0;
    Py_ssize_t closed_at = 0; /* where the last sentence closed */
    Py_ssize_t *end_at = PyMem_New(Py_ssize_t, n_ends + 1); /* the ends, read once */
    if (end_at == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < n_ends; k++) {
        end_at[k] = PyLong_AsSsize_t(PyList_GET_ITEM(ends, k));
        if (end_at[k] == -1 && PyErr_Occurred()) {
            PyMem_Free(end_at);
            return NULL;
        }
    }
    Py_UCS4 last = 0; /* the last character of the previous token */
    w.words = PyList_New(0);
    w.pairs = PyList_New(0);
    w.x = PyUnicode_InternFromString("x");
    sentences = ends != Py_None ? PyList_New(0) : NULL;
    /* the run is built as one string: its characters, in order */
    Py_UCS4 *buf = PyMem_New(Py_UCS4, 64);
    Py_ssize_t cap = 64, len = 0;
    if (w.words == NULL || w.pairs == NULL || w.x == NULL || buf == NULL || (ends != Py_None && sentences == NULL))
        goto done;
    for (Py_ssize_t i = 0; i <= n; i++) {
        PyObject *t = i < n ? PyList_GET_ITEM(tokens, i) : NULL;
        if (t != NULL && !PyUnicode_Check(t)) {
            PyErr_SetString(PyExc_TypeError, "walk() takes a list of str tokens");
            goto done;
        }
        Py_ssize_t tn = t != NULL ? PyUnicode_GET_LENGTH(t) : 0;
        Py_UCS4 first = tn ? PyUnicode_READ_CHAR(t, 0) : 0;
        int boundary = 0; /* a sentence ends before this token */
        if (sentences != NULL && si < n_ends && (end_at[si] <= at || t == NULL)) {
            Py_ssize_t end = end_at[si];
            if (end != at) {
                if (end > at || end < 0) {
                    PyErr_SetString(PyExc_ValueError, "walk(): the sentences' ends do not match the tokens");
                    goto done;
                }
                /* a token across a sentence's end: jieba cut one block over both sentences */
                Py_INCREF(Py_None);
                out = Py_None;
                goto done;
            }
            if (t != NULL && at > 0 && block_char(last) && block_char(first)) {
                Py_INCREF(Py_None); /* two sentences meet inside a block */
                out = Py_None;
                goto done;
            }
            boundary = 1;
        }
        int joined = t != NULL && tn > 1 && !boundary && letters_digits(t);
        if (joined) { /* letters and digits jieba's HMM-off cut joined: route steps, one by one */
            PyObject *f = PyDict_GetItemWithError(w.freq, t);
            int known = f != NULL ? PyObject_IsTrue(f) : (PyErr_Occurred() ? -1 : 0);
            if (known < 0)
                goto done;
            if (known) { /* a dictionary word: the route might hold it whole */
                Py_INCREF(Py_None);
                out = Py_None;
                goto done;
            }
        }
        if (joined || (tn == 1 && !boundary && route_step(first))) {
            if (len + tn > cap) {
                while (len + tn > cap)
                    cap *= 2;
                Py_UCS4 *grown = PyMem_Realloc(buf, cap * sizeof(Py_UCS4));
                if (grown == NULL) {
                    PyErr_NoMemory();
                    goto done;
                }
                buf = grown;
            }
            for (Py_ssize_t k = 0; k < tn; k++)
                buf[len++] = PyUnicode_READ_CHAR(t, k);
            at += tn;
            last = buf[len - 1];
            continue;
        }
        if (len) {
            PyObject *run = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, len);
            int rc = run != NULL ? flush(&w, run) : -1;
            Py_XDECREF(run);
            len = 0;
            if (rc < 0)
                goto done;
        }
        if (boundary) { /* every sentence that ends here, empty ones too */
            while (si < n_ends) {
                if (end_at[si] != at)
                    break;
                if (close_sentence(&w, sentences) < 0)
                    goto done;
                closed_at = at;
                si++;
            }
            if (t != NULL) {
                i--; /* this token again, now in its sentence */
                continue;
            }
        }
        if (t == NULL)
            break;
        if (emit(&w, t) < 0)
            goto done;
        at += tn;
        last = PyUnicode_READ_CHAR(t, tn - 1);
    }
    if (sentences != NULL && (si < n_ends || closed_at != at)) { /* ends beyond the text, or text after them */
        PyErr_SetString(PyExc_ValueError, "walk(): the sentences' ends do not match the tokens");
        goto done;
    }
    out = PyTuple_Pack(2, sentences != NULL ? sentences : w.words, w.pairs);
done:
    PyMem_Free(buf);
    PyMem_Free(end_at);
    Py_XDECREF(w.x);
    Py_XDECREF(w.words);
    Py_XDECREF(w.pairs);
    Py_XDECREF(sentences);
    return out;
}
