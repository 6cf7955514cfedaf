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
 * posseg:
 * Each step follows viterbi.py: previous states that have transitions; the states they may
 * lead to; of those, the ones the character allows (char_state_tab), else all that may
 * follow, else every state; each scored (V[t-1][y0] + trans(y0, y, -inf)) + emit(y, char,
 * -3.14e100), the best previous state kept, ties to the larger state (Python's max over
 * (prob, state) tuples; states are numbered in sorted order). The same additions in the same
 * order as Python's floats, so the same path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define MIN_FLOAT (-3.14e100)
#define CAPSULE "storybench.posseg.model"

typedef struct {
    int n;                 /* states */
    PyObject *tags;        /* list: the tag (str) of each state */
    PyObject *pos;         /* bytes: the position letter (B, M, E, S) of each state */
    PyObject *emit;        /* list of dicts char -> log prob, per state */
    PyObject *char_states; /* dict char -> bytes of uint16 state numbers */
    double *start;
    double *trans;         /* n * n, -inf when absent */
    char *has_trans;       /* n * n */
    double *trans_to;      /* n * n: trans_to[y * n + x] = trans[x * n + y] */
    int *pred_start;       /* n + 1: the states with a transition into y are pred[pred_start[y]..] */
    int *pred;             /* ascending per y */
    char *is_key;          /* the state is a key of trans_p (viterbi.py's all_states) */
    int *n_next;           /* len(trans_p[x]) */
} Model;

static void
model_free(Model *m)
{
    if (m == NULL)
        return;
    Py_XDECREF(m->tags);
    Py_XDECREF(m->pos);
    Py_XDECREF(m->emit);
    Py_XDECREF(m->char_states);
    PyMem_Free(m->start);
    PyMem_Free(m->trans);
    PyMem_Free(m->has_trans);
    PyMem_Free(m->trans_to);
    PyMem_Free(m->pred_start);
    PyMem_Free(m->pred);
    PyMem_Free(m->is_key);
    PyMem_Free(m->n_next);
    PyMem_Free(m);
}

static void
capsule_free(PyObject *capsule)
{
    model_free((Model *)PyCapsule_GetPointer(capsule, CAPSULE));
}

static int
state_number(PyObject *index, PyObject *state)
{
    PyObject *v = PyDict_GetItemWithError(index, state);
    if (v == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_KeyError, "unknown part-of-speech state");
        return -1;
    }
    return (int)PyLong_AsLong(v);
}

/* One state's start, emission and transition entries. */
static int
load_state(Model *m, PyObject *index, PyObject *state, int i, PyObject *start_p, PyObject *trans_p,
           PyObject *emit_p)
{
    int n = m->n;
    PyObject *v = PyDict_GetItemWithError(start_p, state);
    if (v == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_KeyError, "a state without a start probability");
        return -1;
    }
    m->start[i] = PyFloat_AsDouble(v);
    PyObject *e = PyDict_GetItemWithError(emit_p, state);
    if (e == NULL && PyErr_Occurred())
        return -1;
    e = e ? (Py_INCREF(e), e) : PyDict_New();  /* no emissions: every character gets MIN_FLOAT */
    if (e == NULL || !PyDict_Check(e)) {
        Py_XDECREF(e);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "emission tables must be dicts");
        return -1;
    }
    PyList_SET_ITEM(m->emit, i, e);
    for (int j = 0; j < n; j++)
        m->trans[(size_t)i * n + j] = -INFINITY;
    PyObject *t = PyDict_GetItemWithError(trans_p, state);
    if (t == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (!PyDict_Check(t)) {
        PyErr_SetString(PyExc_TypeError, "transition tables must be dicts");
        return -1;
    }
    m->is_key[i] = 1;
    m->n_next[i] = (int)PyDict_GET_SIZE(t);
    Py_ssize_t at = 0;
    PyObject *key, *val;
    while (PyDict_Next(t, &at, &key, &val)) {
        int j = state_number(index, key);
        if (j < 0)
            return -1;
        m->trans[(size_t)i * n + j] = PyFloat_AsDouble(val);
        m->has_trans[(size_t)i * n + j] = 1;
    }
    return 0;
}

/* char_state_tab: char -> the state numbers it allows, packed as uint16 bytes. */
static int
load_char_states(Model *m, PyObject *index, PyObject *char_state)
{
    Py_ssize_t at = 0;
    PyObject *ch, *tuple;
    while (PyDict_Next(char_state, &at, &ch, &tuple)) {
        PyObject *seq = PySequence_Fast(tuple, "char_state_tab values must be sequences");
        if (seq == NULL)
            return -1;
        Py_ssize_t k, len = PySequence_Fast_GET_SIZE(seq);
        PyObject *bytes = PyBytes_FromStringAndSize(NULL, len * 2);
        if (bytes == NULL) {
            Py_DECREF(seq);
            return -1;
        }
        unsigned char *out = (unsigned char *)PyBytes_AS_STRING(bytes);
        for (k = 0; k < len; k++) {
            int j = state_number(index, PySequence_Fast_GET_ITEM(seq, k));
            if (j < 0)
                break;
            out[2 * k] = (unsigned char)(j & 0xff);
            out[2 * k + 1] = (unsigned char)(j >> 8);
        }
        Py_DECREF(seq);
        int r = k < len ? -1 : PyDict_SetItem(m->char_states, ch, bytes);
        Py_DECREF(bytes);
        if (r < 0)
            return -1;
    }
    return 0;
}

/* The transposed transitions and, per state, the states that lead to it (ascending). */
static int
load_predecessors(Model *m)
{
    int n = m->n, k = 0;
    m->trans_to = PyMem_Malloc((size_t)n * n * sizeof(double));
    m->pred_start = PyMem_Calloc((size_t)n + 1, sizeof(int));
    m->pred = PyMem_Malloc(((size_t)n * n + 1) * sizeof(int));
    if (!m->trans_to || !m->pred_start || !m->pred) {
        PyErr_NoMemory();
        return -1;
    }
    for (int y = 0; y < n; y++) {
        m->pred_start[y] = k;
        for (int x = 0; x < n; x++) {
            m->trans_to[(size_t)y * n + x] = m->trans[(size_t)x * n + y];
            if (m->has_trans[(size_t)x * n + y])
                m->pred[k++] = x;
        }
    }
    m->pred_start[n] = k;
    return 0;
}

/* The (tag, position letter) of each state tuple, and state tuple -> number. */
static int
load_names(Model *m, PyObject *states, PyObject *index)
{
    char *pos = PyBytes_AS_STRING(m->pos);
    for (int i = 0; i < m->n; i++) {
        PyObject *state = PyList_GET_ITEM(states, i), *num = PyLong_FromLong(i);
        int r = num == NULL ? -1 : PyDict_SetItem(index, state, num);
        Py_XDECREF(num);
        if (r < 0)
            return -1;
        PyObject *letter, *tag;
        if (!PyArg_ParseTuple(state, "UU", &letter, &tag))
            return -1;
        if (PyUnicode_GET_LENGTH(letter) != 1) {
            PyErr_SetString(PyExc_ValueError, "a state's position is one letter");
            return -1;
        }
        pos[i] = (char)PyUnicode_READ_CHAR(letter, 0);
        Py_INCREF(tag);
        PyList_SET_ITEM(m->tags, i, tag);
    }
    return 0;
}

static PyObject *
posseg_model(PyObject *self, PyObject *args)
{
    PyObject *states, *char_state, *start_p, *trans_p, *emit_p, *index = NULL;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!", &PyList_Type, &states, &PyDict_Type, &char_state,
                          &PyDict_Type, &start_p, &PyDict_Type, &trans_p, &PyDict_Type, &emit_p))
        return NULL;
    int n = (int)PyList_GET_SIZE(states);
    if (n <= 0 || n > 65535) {
        PyErr_SetString(PyExc_ValueError, "1 to 65535 states");
        return NULL;
    }
    Model *m = PyMem_Calloc(1, sizeof(Model));
    if (m == NULL)
        return PyErr_NoMemory();
    m->n = n;
    m->tags = PyList_New(n);
    m->pos = PyBytes_FromStringAndSize(NULL, n);
    m->emit = PyList_New(n);
    m->char_states = PyDict_New();
    m->start = PyMem_Calloc(n, sizeof(double));
    m->trans = PyMem_Calloc((size_t)n * n, sizeof(double));
    m->has_trans = PyMem_Calloc((size_t)n * n, 1);
    m->is_key = PyMem_Calloc(n, 1);
    m->n_next = PyMem_Calloc(n, sizeof(int));
    index = PyDict_New();
    if (!m->tags || !m->pos || !m->emit || !m->char_states || !m->start || !m->trans || !m->has_trans ||
        !m->is_key || !m->n_next || !index) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto error;
    }
    if (load_names(m, states, index) < 0)
        goto error;
    for (int i = 0; i < n; i++)
        if (load_state(m, index, PyList_GET_ITEM(states, i), i, start_p, trans_p, emit_p) < 0)
            goto error;
    if (load_char_states(m, index, char_state) < 0 || load_predecessors(m) < 0)
        goto error;
    Py_DECREF(index);
    PyObject *capsule = PyCapsule_New(m, CAPSULE, capsule_free);
    if (capsule == NULL)
        model_free(m);
    return capsule;
error:
    Py_XDECREF(index);
    model_free(m);
    return NULL;
}

/* emit(y, char) as viterbi.py's emit_p[y].get(char, MIN_FLOAT) */
static int
emit_of(const Model *m, int y, PyObject *ch, double *out)
{
    PyObject *v = PyDict_GetItemWithError(PyList_GET_ITEM(m->emit, y), ch);
    if (v == NULL) {
        *out = MIN_FLOAT;
        return PyErr_Occurred() ? -1 : 0;
    }
    *out = PyFloat_AsDouble(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* The states `ch` allows as flags; 0 when char_state_tab has no entry for it. */
static int
allowed_states(const Model *m, PyObject *ch, char *allowed)
{
    memset(allowed, 0, m->n);
    PyObject *b = PyDict_GetItemWithError(m->char_states, ch);
    if (b == NULL)
        return PyErr_Occurred() ? -1 : 0;
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(b);
    Py_ssize_t k, len = PyBytes_GET_SIZE(b) / 2;
    for (k = 0; k < len; k++)
        allowed[p[2 * k] | (p[2 * k + 1] << 8)] = 1;
    return 1;
}

typedef struct {
    double *V;
    int *back;
    char *present;
    char *allowed;
    char *expect;
    int *prev;
} Work;

/* The states step t may take (viterbi.py's obs_states) into w->allowed; prev gets n_prev.
 * The states the character allows that some previous state leads to; if there are none, every
 * state a previous one leads to; if none, every state. */
static int
step_states(const Model *m, Work *w, Py_ssize_t t, PyObject *ch, int *n_prev)
{
    int n = m->n, any = 0;
    const char *pp = w->present + (size_t)(t - 1) * n;
    *n_prev = 0;
    for (int x = 0; x < n; x++)
        if (pp[x] && m->n_next[x] > 0)
            w->prev[(*n_prev)++] = x;
    int found = allowed_states(m, ch, w->allowed);
    if (found < 0)
        return -1;
    for (int y = 0; y < n; y++) {  /* set(states.get(char, all_states)) & expected */
        int ok = 0, a = m->pred_start[y], b = m->pred_start[y + 1];
        if (!(found ? w->allowed[y] : m->is_key[y])) {
        } else if (*n_prev <= b - a) {
            for (int k = 0; k < *n_prev && !ok; k++)
                ok = m->has_trans[(size_t)w->prev[k] * n + y];
        } else {
            for (int k = a; k < b && !ok; k++)
                ok = pp[m->pred[k]];
        }
        w->allowed[y] = (char)ok;
        any |= ok;
    }
    if (any)
        return 0;
    int any_expect = 0;
    memset(w->expect, 0, (size_t)n);
    for (int k = 0; k < *n_prev; k++) {
        const char *h = m->has_trans + (size_t)w->prev[k] * n;
        for (int y = 0; y < n; y++)
            if (h[y])
                w->expect[y] = any_expect = 1;
    }
    for (int y = 0; y < n; y++)
        w->allowed[y] = any_expect ? w->expect[y] : m->is_key[y];
    return 0;
}

/* The best (score, previous state) over the previous states with a transition into y, in
 * ascending order (ties to the larger state): the overall best when it is finite, since
 * every other previous state scores -inf. 0 when there is none or it is -inf (the caller then
 * scores every previous state, as viterbi.py does). */
static int
best_linked(const Model *m, const Work *w, Py_ssize_t t, int y, double e, int n_prev, double *best, int *arg)
{
    int n = m->n, a = m->pred_start[y], b = m->pred_start[y + 1];
    const char *pp = w->present + (size_t)(t - 1) * n;
    const double *Vp = w->V + (size_t)(t - 1) * n, *tr = m->trans_to + (size_t)y * n;
    *arg = -1;
    if (n_prev <= b - a) {
        for (int k = 0; k < n_prev; k++) {
            int x = w->prev[k];
            if (!m->has_trans[(size_t)x * n + y])
                continue;
            double s = (Vp[x] + tr[x]) + e;
            if (*arg < 0 || s >= *best) {
                *best = s;
                *arg = x;
            }
        }
    } else {
        for (int k = a; k < b; k++) {
            int x = m->pred[k];
            if (!pp[x])
                continue;
            double s = (Vp[x] + tr[x]) + e;
            if (*arg < 0 || s >= *best) {
                *best = s;
                *arg = x;
            }
        }
    }
    return *arg >= 0 && *best != -INFINITY;
}

/* Fill V, back and present for every character of obs. */
static int
forward(const Model *m, Work *w, PyObject *obs, Py_ssize_t T)
{
    int n = m->n;
    for (Py_ssize_t t = 0; t < T; t++) {
        PyObject *ch = PyUnicode_Substring(obs, t, t + 1);
        int n_prev = 0, r = 0;
        if (ch == NULL)
            return -1;
        if (t == 0) {
            int found = allowed_states(m, ch, w->allowed);
            r = found;
            for (int y = 0; r >= 0 && y < n; y++)
                w->allowed[y] = found ? w->allowed[y] : m->is_key[y];
        } else {
            r = step_states(m, w, t, ch, &n_prev);
        }
        double *Vt = w->V + (size_t)t * n, *Vp = Vt - n;
        for (int y = 0; r >= 0 && y < n; y++) {
            double e, best = 0.0;
            int arg = -1;
            if (!w->allowed[y])
                continue;
            if ((r = emit_of(m, y, ch, &e)) < 0)
                break;
            if (t == 0) {
                best = m->start[y] + e;
            } else if (best_linked(m, w, t, y, e, n_prev, &best, &arg)) {
                /* the best previous state among those that lead to y (finite transitions) */
            } else {
                for (int k = 0; k < n_prev; k++) {
                    int y0 = w->prev[k];
                    double s = (Vp[y0] + m->trans[(size_t)y0 * n + y]) + e;
                    if (arg < 0 || s > best || (s == best && y0 > arg)) {
                        best = s;
                        arg = y0;
                    }
                }
                if (arg < 0) {
                    PyErr_SetString(PyExc_ValueError, "max() arg is an empty sequence");
                    r = -1;
                    break;
                }
            }
            Vt[y] = best;
            w->back[(size_t)t * n + y] = arg;
            w->present[(size_t)t * n + y] = 1;
        }
        Py_DECREF(ch);
        if (r < 0)
            return -1;
    }
    return 0;
}

/* Append (obs[begin:end], tag) to out. */
static int
append_pair(PyObject *out, PyObject *obs, Py_ssize_t begin, Py_ssize_t end, PyObject *tag)
{
    PyObject *word = PyUnicode_Substring(obs, begin, end);
    if (word == NULL)
        return -1;
    PyObject *pair = PyTuple_Pack(2, word, tag);
    Py_DECREF(word);
    if (pair == NULL)
        return -1;
    int r = PyList_Append(out, pair);
    Py_DECREF(pair);
    return r;
}

/* The best path backwards, grouped as POSTokenizer.__cut does: B..E and S are words, a
 * trailing unfinished word takes the tag of its first character. */
static PyObject *
pairs_of_path(const Model *m, const Work *w, PyObject *obs, Py_ssize_t T)
{
    int n = m->n, state = -1;
    const double *Vl = w->V + (size_t)(T - 1) * n;
    const char *pl = w->present + (size_t)(T - 1) * n, *letters = PyBytes_AS_STRING(m->pos);
    double best = 0.0;
    for (int y = 0; y < n; y++)
        if (pl[y] && (state < 0 || Vl[y] > best || (Vl[y] == best && y > state))) {
            best = Vl[y];
            state = y;
        }
    if (state < 0) {
        PyErr_SetString(PyExc_ValueError, "max() arg is an empty sequence");
        return NULL;
    }
    int *path = PyMem_Malloc((size_t)T * sizeof(int));
    if (path == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = T - 1; i >= 0; i--) {
        path[i] = state;
        state = w->back[(size_t)i * n + state];
    }
    PyObject *out = PyList_New(0);
    Py_ssize_t begin = 0, next = 0;
    for (Py_ssize_t i = 0; out != NULL && i < T; i++) {
        char letter = letters[path[i]];
        PyObject *tag = PyList_GET_ITEM(m->tags, path[i]);
        if (letter == 'B') {
            begin = i;
        } else if (letter == 'E' || letter == 'S') {
            if (append_pair(out, obs, letter == 'E' ? begin : i, i + 1, tag) < 0)
                Py_CLEAR(out);
            next = i + 1;
        }
    }
    if (out != NULL && next < T && append_pair(out, obs, next, T, PyList_GET_ITEM(m->tags, path[next])) < 0)
        Py_CLEAR(out);
    PyMem_Free(path);
    return out;
}

static PyObject *
posseg_cut(PyObject *self, PyObject *args)
{
    PyObject *capsule, *obs, *out = NULL;
    if (!PyArg_ParseTuple(args, "OU", &capsule, &obs))
        return NULL;
    Model *m = PyCapsule_GetPointer(capsule, CAPSULE);
    if (m == NULL)
        return NULL;
    Py_ssize_t T = PyUnicode_GET_LENGTH(obs);
    if (T == 0)
        return PyList_New(0);
    size_t cells = (size_t)T * m->n;
    Work w = {PyMem_Malloc(cells * sizeof(double)), PyMem_Malloc(cells * sizeof(int)), PyMem_Calloc(cells, 1),
              PyMem_Malloc(m->n), PyMem_Malloc(m->n), PyMem_Malloc(m->n * sizeof(int))};
    if (!w.V || !w.back || !w.present || !w.allowed || !w.expect || !w.prev)
        PyErr_NoMemory();
    else if (forward(m, &w, obs, T) == 0)
        out = pairs_of_path(m, &w, obs, T);
    PyMem_Free(w.V);
    PyMem_Free(w.back);
    PyMem_Free(w.present);
    PyMem_Free(w.allowed);
    PyMem_Free(w.expect);
    PyMem_Free(w.prev);
    return out;
}

/* ---------------------------------------------------------------------------------------
 * jieba.finalseg's Viterbi (the HMM step of jieba.lcut(text, HMM=True)) over states B, M, E, S:
 * each state's best predecessor among PrevStatus's two, scored (V[t-1][y0] + trans(y0, y,
 * -3.14e100)) + emit(y, char, -3.14e100), ties to the larger state letter; the last state E or
 * S, whichever scores more (ties to S); the path grouped into words as finalseg's __cut does.
 * ------------------------------------------------------------------------------------- */
#define FS_CAPSULE "storybench.finalseg.model"
static const char FS_LETTERS[4] = {'B', 'M', 'E', 'S'};
static const int FS_PREV[4][2] = {{2, 3}, {1, 0}, {0, 1}, {3, 2}};  /* B: ES, M: MB, E: BM, S: SE */

typedef struct {
    double start[4];
    double trans[4][4];
    PyObject *emit[4];  /* dicts char -> log prob */
} FsModel;

static void
fs_capsule_free(PyObject *capsule)
{
    FsModel *m = PyCapsule_GetPointer(capsule, FS_CAPSULE);
    if (m == NULL)
        return;
    for (int i = 0; i < 4; i++)
        Py_XDECREF(m->emit[i]);
    PyMem_Free(m);
}

static int
fs_letter_value(PyObject *table, int y, double fallback, double *out)
{
    PyObject *key = PyUnicode_FromOrdinal(FS_LETTERS[y]);
    if (key == NULL)
        return -1;
    PyObject *v = PyDict_GetItemWithError(table, key);
    Py_DECREF(key);
    if (v == NULL) {
        *out = fallback;
        return PyErr_Occurred() ? -1 : 0;
    }
    *out = PyFloat_AsDouble(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

static int
fs_load(FsModel *m, PyObject *start_p, PyObject *trans_p, PyObject *emit_p)
{
    for (int y = 0; y < 4; y++) {
        PyObject *key = PyUnicode_FromOrdinal(FS_LETTERS[y]), *row, *emit;
        if (key == NULL)
            return -1;
        row = PyDict_GetItemWithError(trans_p, key);
        emit = PyDict_GetItemWithError(emit_p, key);
        Py_DECREF(key);
        if (row == NULL || emit == NULL || !PyDict_Check(row) || !PyDict_Check(emit)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_KeyError, "finalseg tables need dicts for B, M, E and S");
            return -1;
        }
        Py_INCREF(emit);
        m->emit[y] = emit;
        if (fs_letter_value(start_p, y, NAN, &m->start[y]) < 0)
            return -1;
        if (isnan(m->start[y])) {
            PyErr_SetString(PyExc_KeyError, "a state without a start probability");
            return -1;
        }
        for (int z = 0; z < 4; z++)
            if (fs_letter_value(row, z, MIN_FLOAT, &m->trans[y][z]) < 0)
                return -1;
    }
    return 0;
}

static PyObject *
finalseg_model(PyObject *self, PyObject *args)
{
    PyObject *start_p, *trans_p, *emit_p;
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyDict_Type, &start_p, &PyDict_Type, &trans_p, &PyDict_Type, &emit_p))
        return NULL;
    FsModel *m = PyMem_Calloc(1, sizeof(FsModel));
    if (m == NULL)
        return PyErr_NoMemory();
    PyObject *capsule = PyCapsule_New(m, FS_CAPSULE, fs_capsule_free);
    if (capsule == NULL) {
        PyMem_Free(m);
        return NULL;
    }
    if (fs_load(m, start_p, trans_p, emit_p) < 0)
        Py_CLEAR(capsule);
    return capsule;
}

static int
fs_emit(const FsModel *m, int y, PyObject *ch, double *out)
{
    PyObject *v = PyDict_GetItemWithError(m->emit[y], ch);
    if (v == NULL) {
        *out = MIN_FLOAT;
        return PyErr_Occurred() ? -1 : 0;
    }
    *out = PyFloat_AsDouble(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* The best state per character into path (T entries). */
static int
fs_viterbi(const FsModel *m, PyObject *obs, Py_ssize_t T, signed char *back, char *path)
{
    double V[4], W[4];
    for (Py_ssize_t t = 0; t < T; t++) {
        PyObject *ch = PyUnicode_Substring(obs, t, t + 1);
        if (ch == NULL)
            return -1;
        for (int y = 0; y < 4; y++) {
            double e;
            if (fs_emit(m, y, ch, &e) < 0) {
                Py_DECREF(ch);
                return -1;
            }
            if (t == 0) {
                W[y] = m->start[y] + e;
                continue;
            }
            int a = FS_PREV[y][0], b = FS_PREV[y][1];
            double sa = (V[a] + m->trans[a][y]) + e, sb = (V[b] + m->trans[b][y]) + e;
            int take_b = sb > sa || (sb == sa && FS_LETTERS[b] > FS_LETTERS[a]);
            W[y] = take_b ? sb : sa;
            back[t * 4 + y] = (signed char)(take_b ? b : a);
        }
        Py_DECREF(ch);
        memcpy(V, W, sizeof(V));
    }
    int state = V[3] >= V[2] ? 3 : 2;  /* max over (V, y) for y in "ES": ties to S */
    for (Py_ssize_t i = T - 1; i >= 0; i--) {
        path[i] = FS_LETTERS[state];
        state = back[i * 4 + state];
    }
    return 0;
}

static PyObject *
finalseg_cut(PyObject *self, PyObject *args)
{
    PyObject *capsule, *obs;
    if (!PyArg_ParseTuple(args, "OU", &capsule, &obs))
        return NULL;
    FsModel *m = PyCapsule_GetPointer(capsule, FS_CAPSULE);
    if (m == NULL)
        return NULL;
    Py_ssize_t T = PyUnicode_GET_LENGTH(obs), begin = 0, next = 0;
    if (T == 0)
        return PyList_New(0);
    signed char *back = PyMem_Malloc((size_t)T * 4);
    char *path = PyMem_Malloc((size_t)T);
    PyObject *out = NULL;
    if (back == NULL || path == NULL)
        PyErr_NoMemory();
    else if (fs_viterbi(m, obs, T, back, path) == 0)
        out = PyList_New(0);
    for (Py_ssize_t i = 0; out != NULL && i < T; i++) {
        PyObject *word = NULL;
        if (path[i] == 'B') {
            begin = i;
            continue;
        }
        if (path[i] == 'M')
            continue;
        word = PyUnicode_Substring(obs, path[i] == 'E' ? begin : i, i + 1);
        next = i + 1;
        if (word == NULL || PyList_Append(out, word) < 0)
            Py_CLEAR(out);
        Py_XDECREF(word);
    }
    if (out != NULL && next < T) {
        PyObject *word = PyUnicode_Substring(obs, next, T);
        if (word == NULL || PyList_Append(out, word) < 0)
            Py_CLEAR(out);
        Py_XDECREF(word);
    }
    PyMem_Free(back);
    PyMem_Free(path);
    return out;
}

static PyMethodDef methods[] = {
    {"posseg_model", posseg_model, METH_VARARGS,
     "posseg_model(states, char_state, start, trans, emit) -> jieba.posseg's HMM tables, for posseg_cut()"},
    {"posseg_cut", posseg_cut, METH_VARARGS,
     "posseg_cut(model, text) -> [(word, tag), ...]: jieba.posseg's Viterbi over a run of Han characters"},
    {"finalseg_model", finalseg_model, METH_VARARGS,
     "finalseg_model(start, trans, emit) -> jieba.finalseg's HMM tables, for finalseg_cut()"},
    {"finalseg_cut", finalseg_cut, METH_VARARGS,
     "finalseg_cut(model, text) -> [word, ...]: jieba.finalseg's Viterbi over a run of Han characters"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_jieba_hmm",
                                    "jieba's HMMs (posseg, finalseg) for unknown Han runs (see zh_posseg.py)", -1, methods};

PyMODINIT_FUNC
PyInit__jieba_hmm(void)
{
    return PyModule_Create(&module);
}
