/* jieba.posseg's HMM tables -> a Model capsule (annotators.text._jieba_hmm, see _jieba_hmm.c). */
#include "_jieba_hmm.h"

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

PyObject *
jh_posseg_model(PyObject *self, PyObject *args)
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

