/* jieba.posseg's Viterbi over a Model (annotators.text._jieba_hmm, see _jieba_hmm.c). */
#include "_jieba_hmm.h"

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
    memset(w->expect, 0, (size_t)(unsigned)n);
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

PyObject *
jh_posseg_cut(PyObject *self, PyObject *args)
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

