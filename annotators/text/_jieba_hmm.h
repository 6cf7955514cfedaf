/* _jieba_hmm.h: what the C files of annotators.text._jieba_hmm share (see _jieba_hmm.c). */
#ifndef STORYBENCH_JIEBA_HMM_H
#define STORYBENCH_JIEBA_HMM_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define MIN_FLOAT (-3.14e100)
#define CAPSULE "storybench.posseg.model"

/* jieba.posseg's HMM tables, as _jieba_hmm_tables.c loads them */
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

PyObject *jh_posseg_model(PyObject *self, PyObject *args);   /* _jieba_hmm_tables.c */
PyObject *jh_posseg_cut(PyObject *self, PyObject *args);     /* _jieba_hmm_posseg.c */
PyObject *jh_finalseg_model(PyObject *self, PyObject *args); /* _jieba_hmm_finalseg.c */
PyObject *jh_finalseg_cut(PyObject *self, PyObject *args);   /* _jieba_hmm_finalseg.c */
PyObject *jh_walk(PyObject *self, PyObject *args);           /* _jieba_hmm_walk.c */
PyObject *jh_posrake_scored(PyObject *self, PyObject *args); /* _jieba_hmm_posrake.c */
#endif
