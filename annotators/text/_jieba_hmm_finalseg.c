#include "_jieba_hmm.h"

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

PyObject *
jh_finalseg_model(PyObject *self, PyObject *args)
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

PyObject *
jh_finalseg_cut(PyObject *self, PyObject *args)
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

