/* Native core of annotators/text/zh_tokens.py: jieba 0.42.1's best route and the walk over it
 * (and, further down, posseg's Viterbi, near_dup's one-permutation hash and exact shingle
 * sets, zh_clean's Han count, words.count_words and the posrake outline's RAKE scores: each
 * used only once it equals the Python code it replaces).
 *
 * Optional: zh_tokens.py uses it when it was built (a C compiler at install time) and its
 * self-check passes, else the pure-Python code beside it. Both compute the same thing:
 *
 * freq_table(freq) -> table, route_table(table, block, logtotal) -> list of ends: jieba's
 *   get_DAG + calc in one backward pass, over a copy of `freq` made once. For each position k, over the prefixes block[k:i+1] found in `freq` (stopping at the
 *   first one that is not), a prefix with a non-zero count scores
 *   (log(count) - logtotal) + score[i+1]; the best score wins, ties to the longer word (the
 *   `max` over (score, end) tuples of jieba's calc). No counted prefix: the character alone,
 *   scored with log(freq.get(char) or 1). The same double operations in the same order as
 *   Python's floats, so the same route.
 *
 * cut(text, ...): the whole of Segmenter._cut (blocks, route, walk) in one call; see zh_cut.
 *
 * walk(block, ends, on, off, pos, tags, runs, pos_runs): jieba's __cut_DAG / __cut_DAG_NO_HMM
 *   (and posseg's __cut_DAG) over a route: words of two or more characters are tokens; runs
 *   of single characters collect in a buffer, which `runs(buf, on)` and `pos_runs(buf, pos)`
 *   (the Python methods holding the HMM caches) resolve when it is longer than one
 *   character; with the caches passed too, a run already in them is taken from there. HMM off joins runs of ASCII letters and digits. Any of on/off/pos may be None.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * freq_table(freq) -> capsule; route_table(capsule, block, logtotal) -> ends.
 * jieba's best route (get_DAG + calc: for each position from the end, every dictionary word
 * starting there scores (log(count) - logtotal) + score[after it], the best one wins, ties
 * to the longer word; with no word, the single character, its count or 1). jieba's FREQ
 * (every word and every word prefix, a prefix having count 0) is copied once into an
 * open-addressing table of code-point spans, so the route makes no string object and no
 * dict lookup per prefix; log(count) is the same libm call jieba makes, so every double is
 * the same.
 * ------------------------------------------------------------------------------------- */
typedef struct {
    uint64_t hash;
    Py_ssize_t off;   /* into chars; -1: empty slot */
    Py_ssize_t len;
    double logc;      /* log(count) when count is truthy */
    int has_count;
    int tag;          /* index into FreqTable.tag_names of the word's part-of-speech tag, or -1 */
} FreqEntry;

typedef struct {
    FreqEntry *slots;
    size_t mask;
    Py_UCS4 *chars;
    PyObject *tags;       /* the word -> tag dict the entries' tags were filled from, or NULL */
    PyObject *tag_names;  /* list of the distinct tags */
} FreqTable;

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static inline uint64_t
fnv_step(uint64_t h, Py_UCS4 c)
{
    return (h ^ (uint64_t)c) * FNV_PRIME;
}

static inline size_t
slot_of(uint64_t h, size_t mask)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return (size_t)h & mask;
}

static void
freq_table_free(PyObject *capsule)
{
    FreqTable *t = PyCapsule_GetPointer(capsule, "storybench.freq_table");
    if (t) {
        Py_XDECREF(t->tags);
        Py_XDECREF(t->tag_names);
        PyMem_Free(t->slots);
        PyMem_Free(t->chars);
        PyMem_Free(t);
    }
}

static PyObject *
zh_freq_table(PyObject *self, PyObject *args)
{
    PyObject *freq;
    if (!PyArg_ParseTuple(args, "O!", &PyDict_Type, &freq))
        return NULL;
    Py_ssize_t count = PyDict_Size(freq), total_chars = 0, pos = 0;
    PyObject *key, *val;
    while (PyDict_Next(freq, &pos, &key, &val)) {
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "freq keys must be str");
            return NULL;
        }
        total_chars += PyUnicode_GET_LENGTH(key);
    }
    size_t size = 16;
    while (size < (size_t)count * 2)
        size <<= 1;
    FreqTable *t = PyMem_Calloc(1, sizeof(FreqTable));
    if (!t)
        return PyErr_NoMemory();
    t->slots = PyMem_Malloc(size * sizeof(FreqEntry));
    t->chars = PyMem_Malloc(((size_t)total_chars + 1) * sizeof(Py_UCS4));
    t->mask = size - 1;
    if (!t->slots || !t->chars) {
        PyMem_Free(t->slots); PyMem_Free(t->chars); PyMem_Free(t);
        return PyErr_NoMemory();
    }
    for (size_t i = 0; i < size; i++)
        t->slots[i].off = -1;
    Py_ssize_t used = 0;
    pos = 0;
    while (PyDict_Next(freq, &pos, &key, &val)) {
        Py_ssize_t len = PyUnicode_GET_LENGTH(key);
        int kind = PyUnicode_KIND(key);
        const void *data = PyUnicode_DATA(key);
        uint64_t h = FNV_OFFSET;
        for (Py_ssize_t j = 0; j < len; j++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, j);
            t->chars[used + j] = c;
            h = fnv_step(h, c);
        }
        int truth = PyObject_IsTrue(val);
        if (truth < 0)
            goto fail;
        double logc = 0.0;
        if (truth) {
            double c = PyFloat_AsDouble(val);
            if (c == -1.0 && PyErr_Occurred())
                goto fail;
            logc = log(c);
        }
        size_t i = slot_of(h, t->mask);
        while (t->slots[i].off >= 0)
            i = (i + 1) & t->mask;
        t->slots[i].hash = h;
        t->slots[i].off = used;
        t->slots[i].len = len;
        t->slots[i].logc = logc;
        t->slots[i].has_count = truth;
        t->slots[i].tag = -1;
        used += len;
    }
    PyObject *capsule = PyCapsule_New(t, "storybench.freq_table", freq_table_free);
    if (!capsule)
        goto fail;
    return capsule;
fail:
    PyMem_Free(t->slots); PyMem_Free(t->chars); PyMem_Free(t);
    return NULL;
}

/* The entry of block[k..k+len) with hash h, or NULL. */
static inline const FreqEntry *
freq_find(const FreqTable *t, uint64_t h, int kind, const void *data, Py_ssize_t k, Py_ssize_t len)
{
    size_t i = slot_of(h, t->mask);
    for (;;) {
        const FreqEntry *e = &t->slots[i];
        if (e->off < 0)
            return NULL;
        if (e->hash == h && e->len == len) {
            Py_ssize_t j = 0;
            while (j < len && t->chars[e->off + j] == PyUnicode_READ(kind, data, k + j))
                j++;
            if (j == len)
                return e;
        }
        i = (i + 1) & t->mask;
    }
}

/* The entry of a whole str word, or NULL (the empty word has none). */
static const FreqEntry *
word_entry(const FreqTable *t, PyObject *word)
{
    Py_ssize_t len = PyUnicode_GET_LENGTH(word);
    if (len == 0)
        return NULL;
    int kind = PyUnicode_KIND(word);
    const void *data = PyUnicode_DATA(word);
    uint64_t h = FNV_OFFSET;
    for (Py_ssize_t j = 0; j < len; j++)
        h = fnv_step(h, PyUnicode_READ(kind, data, j));
    return freq_find(t, h, kind, data, 0, len);
}

/* The best route of the block data[base:base+n]: ends[k] (relative to base) for each k. */
static void
route_core(const FreqTable *t, int kind, const void *data, Py_ssize_t base, Py_ssize_t n,
           double logtotal, Py_ssize_t *ends, double *score, const FreqEntry **chosen)
{
    score[n] = 0.0;
    for (Py_ssize_t k = n - 1; k >= 0; k--) {
        int found = 0;
        double best = 0.0;
        Py_ssize_t end = k;
        const FreqEntry *best_e = NULL;
        uint64_t h = FNV_OFFSET;
        for (Py_ssize_t i = k; i < n; i++) {
            h = fnv_step(h, PyUnicode_READ(kind, data, base + i));
            const FreqEntry *e = freq_find(t, h, kind, data, base + k, i - k + 1);
            if (e == NULL)
                break;
            if (e->has_count) {
                double s = (e->logc - logtotal) + score[i + 1];
                if (!found || s >= best) {
                    best = s;
                    end = i;
                    found = 1;
                    best_e = e;
                }
            }
        }
        if (!found) {
            const FreqEntry *e = freq_find(t, fnv_step(FNV_OFFSET, PyUnicode_READ(kind, data, base + k)),
                                           kind, data, base + k, 1);
            double logc = (e != NULL && e->has_count) ? e->logc : log(1.0);
            best = (logc - logtotal) + score[k + 1];
            best_e = e;
        }
        score[k] = best;
        ends[k] = end;
        if (chosen != NULL)
            chosen[k] = best_e;  /* the entry of block[k..end], or NULL when it has none */
    }
}

/* freq_table_tags(table, tags): each entry of `table` takes the tag `tags` (word -> tag str)
 * gives its word (or none), so that cut() tags a word of a route from this table by its
 * entry instead of a dict lookup, whenever cut() is given this same dict. */
static PyObject *
zh_freq_table_tags(PyObject *self, PyObject *args)
{
    PyObject *capsule, *tags;
    if (!PyArg_ParseTuple(args, "OO!", &capsule, &PyDict_Type, &tags))
        return NULL;
    FreqTable *t = PyCapsule_GetPointer(capsule, "storybench.freq_table");
    if (!t)
        return NULL;
    PyObject *names = PyList_New(0), *ids = PyDict_New();
    if (names == NULL || ids == NULL)
        goto fail;
    for (size_t i = 0; i <= t->mask; i++)
        t->slots[i].tag = -1;
    Py_ssize_t pos = 0;
    PyObject *word, *tag;
    while (PyDict_Next(tags, &pos, &word, &tag)) {
        if (!PyUnicode_Check(word) || !PyUnicode_Check(tag)) {
            PyErr_SetString(PyExc_TypeError, "freq_table_tags: words and tags must be str");
            goto fail;
        }
        FreqEntry *e = (FreqEntry *)word_entry(t, word);
        if (e == NULL)
            continue;
        PyObject *id = PyDict_GetItemWithError(ids, tag);  /* borrowed */
        if (id == NULL) {
            if (PyErr_Occurred())
                goto fail;
            if (PyList_GET_SIZE(names) >= 32767) {
                PyErr_SetString(PyExc_ValueError, "freq_table_tags: too many distinct tags");
                goto fail;
            }
            id = PyLong_FromSsize_t(PyList_GET_SIZE(names));
            if (id == NULL || PyDict_SetItem(ids, tag, id) < 0 || PyList_Append(names, tag) < 0) {
                Py_XDECREF(id);
                goto fail;
            }
            Py_DECREF(id);
            id = PyDict_GetItem(ids, tag);
        }
        e->tag = (int)PyLong_AsLong(id);
    }
    Py_XDECREF(t->tags);
    Py_XDECREF(t->tag_names);
    Py_INCREF(tags);
    t->tags = tags;
    t->tag_names = names;
    Py_DECREF(ids);
    Py_RETURN_NONE;
fail:
    for (size_t i = 0; i <= t->mask; i++)
        t->slots[i].tag = -1;
    Py_XDECREF(t->tags);
    Py_XDECREF(t->tag_names);
    t->tags = t->tag_names = NULL;
    Py_XDECREF(names);
    Py_XDECREF(ids);
    return NULL;
}

/* The freq_table as bytes, and back: a cache of the dictionary table, so that a process can
 * route without building jieba's FREQ dict at all. Layout (native byte order, for this build
 * only): magic "SBFT", format 1, sizeof(FreqEntry), slot count, char count, then the slots
 * (tags cleared) and the code points. from_bytes checks every length and offset. */
#define FT_MAGIC 0x54464253u  /* "SBFT" */
#define FT_FORMAT 1u

static PyObject *
zh_freq_table_bytes(PyObject *self, PyObject *args)
{
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "O", &capsule))
        return NULL;
    FreqTable *t = PyCapsule_GetPointer(capsule, "storybench.freq_table");
    if (!t)
        return NULL;
    uint64_t slots = (uint64_t)t->mask + 1, chars = 0;
    for (uint64_t i = 0; i < slots; i++)
        if (t->slots[i].off >= 0 && (uint64_t)(t->slots[i].off + t->slots[i].len) > chars)
            chars = (uint64_t)(t->slots[i].off + t->slots[i].len);
    uint32_t head32[3] = {FT_MAGIC, FT_FORMAT, (uint32_t)sizeof(FreqEntry)};
    size_t size = sizeof head32 + 2 * sizeof(uint64_t) + slots * sizeof(FreqEntry) + chars * sizeof(Py_UCS4);
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    if (out == NULL)
        return NULL;
    char *p = PyBytes_AS_STRING(out);
    memcpy(p, head32, sizeof head32);
    p += sizeof head32;
    memcpy(p, &slots, sizeof slots);
    p += sizeof slots;
    memcpy(p, &chars, sizeof chars);
    p += sizeof chars;
    FreqEntry *dst = (FreqEntry *)p;
    memcpy(dst, t->slots, slots * sizeof(FreqEntry));
    for (uint64_t i = 0; i < slots; i++)
        dst[i].tag = -1;
    p += slots * sizeof(FreqEntry);
    memcpy(p, t->chars, chars * sizeof(Py_UCS4));
    return out;
}

static PyObject *
zh_freq_table_from_bytes(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf))
        return NULL;
    const char *p = buf.buf;
    size_t n = (size_t)buf.len, head = 3 * sizeof(uint32_t) + 2 * sizeof(uint64_t);
    uint32_t head32[3];
    uint64_t slots = 0, chars = 0;
    FreqTable *t = NULL;
    if (n < head)
        goto bad;
    memcpy(head32, p, sizeof head32);
    memcpy(&slots, p + sizeof head32, sizeof slots);
    memcpy(&chars, p + sizeof head32 + sizeof slots, sizeof chars);
    if (head32[0] != FT_MAGIC || head32[1] != FT_FORMAT || head32[2] != sizeof(FreqEntry) || slots < 16 ||
        (slots & (slots - 1)) || slots > ((uint64_t)1 << 40) || chars > ((uint64_t)1 << 40) ||
        n != head + slots * sizeof(FreqEntry) + chars * sizeof(Py_UCS4))
        goto bad;
    t = PyMem_Calloc(1, sizeof(FreqTable));
    if (!t) {
        PyBuffer_Release(&buf);
        return PyErr_NoMemory();
    }
    t->slots = PyMem_Malloc(slots * sizeof(FreqEntry));
    t->chars = PyMem_Malloc((chars + 1) * sizeof(Py_UCS4));
    if (!t->slots || !t->chars) {
        PyMem_Free(t->slots); PyMem_Free(t->chars); PyMem_Free(t);
        PyBuffer_Release(&buf);
        return PyErr_NoMemory();
    }
    t->mask = (size_t)slots - 1;
    memcpy(t->slots, p + head, slots * sizeof(FreqEntry));
    memcpy(t->chars, p + head + slots * sizeof(FreqEntry), chars * sizeof(Py_UCS4));
    for (uint64_t i = 0; i < slots; i++) {
        FreqEntry *e = &t->slots[i];
        e->tag = -1;
        if (e->off >= 0 && (e->len < 1 || (uint64_t)(e->off + e->len) > chars)) {
            PyMem_Free(t->slots); PyMem_Free(t->chars); PyMem_Free(t);
            goto bad;
        }
    }
    PyBuffer_Release(&buf);
    PyObject *capsule = PyCapsule_New(t, "storybench.freq_table", freq_table_free);
    if (!capsule) {
        PyMem_Free(t->slots); PyMem_Free(t->chars); PyMem_Free(t);
    }
    return capsule;
bad:
    PyBuffer_Release(&buf);
    PyErr_SetString(PyExc_ValueError, "not a freq_table of this build");
    return NULL;
}

/* freq_has_count(table, word) -> whether FREQ.get(word) is truthy (a word with a count). */
static PyObject *
zh_freq_has_count(PyObject *self, PyObject *args)
{
    PyObject *capsule, *word;
    if (!PyArg_ParseTuple(args, "OU", &capsule, &word))
        return NULL;
    FreqTable *t = PyCapsule_GetPointer(capsule, "storybench.freq_table");
    if (!t)
        return NULL;
    const FreqEntry *e = word_entry(t, word);
    return PyBool_FromLong(e != NULL && e->has_count);
}

static PyObject *
zh_route_table(PyObject *self, PyObject *args)
{
    PyObject *capsule, *block;
    double logtotal;
    if (!PyArg_ParseTuple(args, "OUd", &capsule, &block, &logtotal))
        return NULL;
    FreqTable *t = PyCapsule_GetPointer(capsule, "storybench.freq_table");
    if (!t)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(block);
    double *score = PyMem_Calloc((size_t)n + 1, sizeof(double));
    Py_ssize_t *ends = PyMem_Calloc((size_t)n + 1, sizeof(Py_ssize_t));
    PyObject *out = NULL;
    if (score == NULL || ends == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    route_core(t, PyUnicode_KIND(block), PyUnicode_DATA(block), 0, n, logtotal, ends, score, NULL);
    out = PyList_New(n);
    if (out == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *v = PyLong_FromSsize_t(ends[k]);
        if (v == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, k, v);
    }
done:
    PyMem_Free(score);
    PyMem_Free(ends);
    return out;
}

static int
is_eng(Py_UCS4 c)
{
    return c < 128 && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));
}

static int
append_new(PyObject *list, PyObject *item)  /* steals item */
{
    if (item == NULL)
        return -1;
    int r = PyList_Append(list, item);
    Py_DECREF(item);
    return r;
}

static int
append_tagged(PyObject *pos, PyObject *tags, PyObject *word, PyObject *x)
{
    PyObject *tag = PyDict_GetItemWithError(tags, word);  /* borrowed */
    if (tag == NULL) {
        if (PyErr_Occurred())
            return -1;
        tag = x;
    }
    return append_new(pos, PyTuple_Pack(2, word, tag));
}

/* What a walk resolves runs of single characters with: the tag table, the Python methods
 * `runs(buf, on)` / `pos_runs(buf, pos)` (Segmenter._runs / _pos_runs), the "x" tag, and
 * the dicts those methods cache their HMM results in (or NULL): a run found there is
 * extended from the cache directly (a run is cached only when it is not a dictionary word,
 * which never changes, so the method would give exactly the cached tokens). */
typedef struct {
    PyObject *tags, *runs, *pos_runs, *x, *hmm_cache, *pos_cache;
    /* with a route from a freq_table whose tags were filled from `tags`: the entry each
     * position's chosen word has (or NULL), and the table's tag names; else both NULL */
    const FreqEntry **chosen;
    PyObject *tag_names;
} WalkCtx;

/* append (word, tag) to pos: the tag from the word's table entry when there is one (filled
 * from the same tags dict), else from the dict, else "x" */
static int
append_tagged_entry(PyObject *pos, const WalkCtx *ctx, PyObject *word, const FreqEntry *e)
{
    if (ctx->tag_names != NULL && e != NULL)
        return append_new(pos, PyTuple_Pack(2, word, e->tag >= 0 ? PyList_GET_ITEM(ctx->tag_names, e->tag) : ctx->x));
    return append_tagged(pos, ctx->tags, word, ctx->x);
}

/* extend `out` with the cached tuple of `buf` in `cache`: 1 when found, 0 when not, -1 */
static int
extend_cached(PyObject *cache, PyObject *buf, PyObject *out)
{
    if (cache == NULL)
        return 0;
    PyObject *cut = PyDict_GetItemWithError(cache, buf);  /* borrowed */
    if (cut == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (!PyTuple_Check(cut))
        return 0;
    Py_ssize_t m = PyTuple_GET_SIZE(cut);
    for (Py_ssize_t j = 0; j < m; j++)
        if (PyList_Append(out, PyTuple_GET_ITEM(cut, j)) < 0)
            return -1;
    return 1;
}

/* The buffered run of single characters [start, stop) of src (absolute positions). */
static int
flush_run(PyObject *src, Py_ssize_t start, Py_ssize_t stop, PyObject *on, PyObject *pos,
          const WalkCtx *ctx, const FreqEntry *single)
{
    PyObject *runs = ctx->runs, *pos_runs = ctx->pos_runs;
    if (stop <= start)
        return 0;
    PyObject *buf = PyUnicode_Substring(src, start, stop);
    if (buf == NULL)
        return -1;
    int r = 0;
    if (stop - start == 1) {
        if (on != Py_None && PyList_Append(on, buf) < 0)
            r = -1;
        if (r == 0 && pos != Py_None && append_tagged_entry(pos, ctx, buf, single) < 0)
            r = -1;
    } else {
        if (on != Py_None) {
            r = extend_cached(ctx->hmm_cache, buf, on);
            if (r == 0) {
                PyObject *res = PyObject_CallFunctionObjArgs(runs, buf, on, NULL);
                r = res == NULL ? -1 : 0;
                Py_XDECREF(res);
            } else if (r == 1) {
                r = 0;
            }
        }
        if (r == 0 && pos != Py_None) {
            r = extend_cached(ctx->pos_cache, buf, pos);
            if (r == 0) {
                PyObject *res = PyObject_CallFunctionObjArgs(pos_runs, buf, pos, NULL);
                r = res == NULL ? -1 : 0;
                Py_XDECREF(res);
            } else if (r == 1) {
                r = 0;
            }
        }
    }
    Py_DECREF(buf);
    return r;
}

/* The walk along ends (relative to base) over the block src[base:base+n]. */
static int
walk_core(PyObject *src, Py_ssize_t base, Py_ssize_t n, const Py_ssize_t *ends, PyObject *on,
          PyObject *off, PyObject *pos, const WalkCtx *ctx)
{
    const FreqEntry **chosen = ctx->chosen;
    int kind = PyUnicode_KIND(src);
    const void *data = PyUnicode_DATA(src);
    Py_ssize_t pos_i = 0, buf_start = -1, eng_start = -1;
    while (pos_i < n) {
        Py_ssize_t y = ends[pos_i] + 1;
        if (y <= pos_i || y > n) {
            PyErr_SetString(PyExc_ValueError, "route end out of range");
            return -1;
        }
        if (y - pos_i == 1) {
            if (buf_start < 0)
                buf_start = pos_i;
            if (off != Py_None) {
                Py_UCS4 c = PyUnicode_READ(kind, data, base + pos_i);
                if (is_eng(c)) {
                    if (eng_start < 0)
                        eng_start = pos_i;
                } else {
                    if (eng_start >= 0) {
                        if (append_new(off, PyUnicode_Substring(src, base + eng_start, base + pos_i)) < 0)
                            return -1;
                        eng_start = -1;
                    }
                    if (append_new(off, PyUnicode_Substring(src, base + pos_i, base + pos_i + 1)) < 0)
                        return -1;
                }
            }
        } else {
            PyObject *word = PyUnicode_Substring(src, base + pos_i, base + y);
            if (word == NULL)
                return -1;
            int r = 0;
            if (off != Py_None) {
                if (eng_start >= 0) {
                    r = append_new(off, PyUnicode_Substring(src, base + eng_start, base + pos_i));
                    eng_start = -1;
                }
                if (r == 0)
                    r = PyList_Append(off, word);
            }
            if (r == 0 && buf_start >= 0) {
                r = flush_run(src, base + buf_start, base + pos_i, on, pos, ctx,
                              chosen ? chosen[buf_start] : NULL);
                buf_start = -1;
            }
            if (r == 0 && on != Py_None)
                r = PyList_Append(on, word);
            if (r == 0 && pos != Py_None)
                r = append_tagged_entry(pos, ctx, word, chosen ? chosen[pos_i] : NULL);
            Py_DECREF(word);
            if (r < 0)
                return -1;
        }
        pos_i = y;
    }
    if (off != Py_None && eng_start >= 0) {
        if (append_new(off, PyUnicode_Substring(src, base + eng_start, base + n)) < 0)
            return -1;
    }
    if (buf_start >= 0 && flush_run(src, base + buf_start, base + n, on, pos, ctx,
                                    chosen ? chosen[buf_start] : NULL) < 0)
        return -1;
    return 0;
}

static int
check_outputs(PyObject *on, PyObject *off, PyObject *pos, PyObject *tags)
{
    if ((on != Py_None && !PyList_Check(on)) || (off != Py_None && !PyList_Check(off)) ||
        (pos != Py_None && !PyList_Check(pos)) || (pos != Py_None && !PyDict_Check(tags))) {
        PyErr_SetString(PyExc_TypeError, "on/off/pos must be lists or None, tags a dict");
        return -1;
    }
    return 0;
}

/* A Python route (list of ints, possibly one entry longer than the block) as an array. */
static int
ends_from_list(PyObject *list, Py_ssize_t n, Py_ssize_t *ends)
{
    if (!PyList_Check(list)) {
        PyErr_SetString(PyExc_TypeError, "a route must be a list");
        return -1;
    }
    if (PyList_GET_SIZE(list) < n) {  /* a backend's route may carry one more entry (the end) */
        PyErr_SetString(PyExc_ValueError, "route shorter than the block");
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        ends[k] = PyLong_AsSsize_t(PyList_GET_ITEM(list, k));
        if (ends[k] == -1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* The optional cache arguments: None or absent means no cache; anything else must be a dict. */
static int
check_caches(PyObject **hmm_cache, PyObject **pos_cache)
{
    PyObject **caches[2] = {hmm_cache, pos_cache};
    for (int i = 0; i < 2; i++) {
        if (*caches[i] == Py_None)
            *caches[i] = NULL;
        if (*caches[i] != NULL && !PyDict_Check(*caches[i])) {
            PyErr_SetString(PyExc_TypeError, "the HMM caches must be dicts or None");
            return -1;
        }
    }
    return 0;
}

static PyObject *
zh_walk(PyObject *self, PyObject *args)
{
    PyObject *blk, *ends, *on, *off, *pos, *tags, *runs, *pos_runs, *hmm_cache = NULL, *pos_cache = NULL;
    if (!PyArg_ParseTuple(args, "UO!OOOOOO|OO", &blk, &PyList_Type, &ends, &on, &off, &pos, &tags,
                          &runs, &pos_runs, &hmm_cache, &pos_cache))
        return NULL;
    if (check_caches(&hmm_cache, &pos_cache) < 0)
        return NULL;
    if (check_outputs(on, off, pos, tags) < 0)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(blk);
    Py_ssize_t *route = PyMem_Malloc(sizeof(Py_ssize_t) * ((size_t)n + 1));
    PyObject *x = PyUnicode_FromString("x");
    int r = -1;
    if (route == NULL || x == NULL) {
        if (route == NULL)
            PyErr_NoMemory();
    } else if (ends_from_list(ends, n, route) == 0) {
        WalkCtx ctx = {tags, runs, pos_runs, x, hmm_cache, pos_cache, NULL, NULL};
        r = walk_core(blk, 0, n, route, on, off, pos, &ctx);
    }
    PyMem_Free(route);
    Py_XDECREF(x);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* jieba 0.42.1's block pattern re_han_default: [\u4E00-\u9FD5a-zA-Z0-9+#&\._%\-] */
static inline int
is_han_block_char(Py_UCS4 c)
{
    if (c >= 0x4E00 && c <= 0x9FD5)
        return 1;
    if (c >= 128)
        return 0;
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '#' || c == '&' || c == '.' || c == '_' || c == '%' || c == '-';
}

/* cut(text, table, logtotal, route, on, off, pos, tags, runs, pos_runs, pos_block): the
 * whole of Segmenter._cut. Blocks of re_han_default take the best route (from `table`, a
 * freq_table capsule, or else from calling `route(block)`) and the walk; a block holding
 * "%" or "-" walks for on/off only and `pos_block(block, pos)` tags it (posseg's own
 * blocks). Between blocks every character is a token of its own, except "\r\n", which is
 * one (re_skip_default), tagged "x". */
static PyObject *
zh_cut(PyObject *self, PyObject *args)
{
    PyObject *text, *table, *route_fn, *on, *off, *pos, *tags, *runs, *pos_runs, *pos_block;
    PyObject *hmm_cache = NULL, *pos_cache = NULL;
    double logtotal;
    if (!PyArg_ParseTuple(args, "UOdOOOOOOOO|OO", &text, &table, &logtotal, &route_fn, &on, &off, &pos,
                          &tags, &runs, &pos_runs, &pos_block, &hmm_cache, &pos_cache))
        return NULL;
    if (check_caches(&hmm_cache, &pos_cache) < 0)
        return NULL;
    if (check_outputs(on, off, pos, tags) < 0)
        return NULL;
    FreqTable *t = NULL;
    if (table != Py_None) {
        t = PyCapsule_GetPointer(table, "storybench.freq_table");
        if (!t)
            return NULL;
    }
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t *ends = PyMem_Malloc(sizeof(Py_ssize_t) * ((size_t)len + 1));
    double *score = PyMem_Malloc(sizeof(double) * ((size_t)len + 1));
    PyObject *x = PyUnicode_FromString("x");
    if (ends == NULL || score == NULL || x == NULL) {
        PyMem_Free(ends); PyMem_Free(score); Py_XDECREF(x);
        return x == NULL ? NULL : PyErr_NoMemory();
    }
    int text_out = on != Py_None || off != Py_None;
    const FreqEntry **chosen = t != NULL ? PyMem_Malloc(sizeof(FreqEntry *) * ((size_t)len + 1)) : NULL;
    if (t != NULL && chosen == NULL) {
        PyMem_Free(ends); PyMem_Free(score); Py_DECREF(x);
        return PyErr_NoMemory();
    }
    WalkCtx ctx = {tags, runs, pos_runs, x, hmm_cache, pos_cache, NULL,
                   (t != NULL && t->tags != NULL && t->tags == tags) ? t->tag_names : NULL};
    Py_ssize_t i = 0;
    while (i < len) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (is_han_block_char(c)) {
            Py_ssize_t e = i + 1, special = 0;
            while (e < len) {
                Py_UCS4 d = PyUnicode_READ(kind, data, e);
                if (!is_han_block_char(d))
                    break;
                e++;
            }
            if (pos != Py_None)
                for (Py_ssize_t k = i; k < e && !special; k++) {
                    Py_UCS4 d = PyUnicode_READ(kind, data, k);
                    special = d == '%' || d == '-';
                }
            Py_ssize_t n = e - i;
            PyObject *blk = NULL;
            if (t != NULL) {
                route_core(t, kind, data, i, n, logtotal, ends, score, chosen);
                ctx.chosen = ctx.tag_names != NULL ? chosen : NULL;
            } else {
                ctx.chosen = NULL;
                blk = PyUnicode_Substring(text, i, e);
                PyObject *list = blk ? PyObject_CallOneArg(route_fn, blk) : NULL;
                int r = list ? ends_from_list(list, n, ends) : -1;
                Py_XDECREF(list);
                if (r < 0)
                    goto error_blk;
            }
            if (special) {
                if (text_out && walk_core(text, i, n, ends, on, off, Py_None, &ctx) < 0)
                    goto error_blk;
                if (blk == NULL && (blk = PyUnicode_Substring(text, i, e)) == NULL)
                    goto error;
                PyObject *res = PyObject_CallFunctionObjArgs(pos_block, blk, pos, NULL);
                if (res == NULL)
                    goto error_blk;
                Py_DECREF(res);
            } else if (walk_core(text, i, n, ends, on, off, pos, &ctx) < 0) {
                goto error_blk;
            }
            Py_XDECREF(blk);
            i = e;
            continue;
        error_blk:
            Py_XDECREF(blk);
            goto error;
        }
        Py_ssize_t e = (c == '\r' && i + 1 < len && PyUnicode_READ(kind, data, i + 1) == '\n') ? i + 2 : i + 1;
        PyObject *tok = PyUnicode_Substring(text, i, e);
        if (tok == NULL)
            goto error;
        int r = 0;
        if (on != Py_None)
            r = PyList_Append(on, tok);
        if (r == 0 && off != Py_None)
            r = PyList_Append(off, tok);
        if (r == 0 && pos != Py_None)
            r = append_new(pos, PyTuple_Pack(2, tok, x));
        Py_DECREF(tok);
        if (r < 0)
            goto error;
        i = e;
    }
    PyMem_Free(ends); PyMem_Free(score); PyMem_Free(chosen); Py_DECREF(x);
    Py_RETURN_NONE;
error:
    PyMem_Free(ends); PyMem_Free(score); PyMem_Free(chosen); Py_DECREF(x);
    return NULL;
}

/* cut_many(sentences, table, logtotal, route, want_off, want_pos, tags, runs, pos_runs,
 * pos_block, hmm_cache, pos_cache) -> (words, off, pos): cut() of every sentence in one call:
 * words is a tuple of one tuple per sentence of its HMM-on tokens that are not whitespace
 * (str.strip() would leave something), off and pos the HMM-off tokens and posseg pairs of
 * all the sentences one after another (None when not wanted). */
static int
is_blank(PyObject *token)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(token);
    int kind = PyUnicode_KIND(token);
    const void *data = PyUnicode_DATA(token);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)))
            return 0;
    return 1;
}

static PyObject *
zh_cut_many(PyObject *self, PyObject *args)
{
    PyObject *sentences, *table, *logtotal, *route, *tags, *runs, *pos_runs, *pos_block, *hmm_cache, *pos_cache;
    int want_off, want_pos;
    if (!PyArg_ParseTuple(args, "OOOOppOOOOOO", &sentences, &table, &logtotal, &route, &want_off, &want_pos,
                          &tags, &runs, &pos_runs, &pos_block, &hmm_cache, &pos_cache))
        return NULL;
    PyObject *seq = PySequence_Fast(sentences, "cut_many takes a sequence of sentences");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *words = PyTuple_New(n), *off = NULL, *pos = NULL, *out = NULL;
    if (words == NULL)
        goto done;
    if (want_off && (off = PyList_New(0)) == NULL)
        goto done;
    if (want_pos && (pos = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *on = PyList_New(0);
        if (on == NULL)
            goto done;
        PyObject *call = PyTuple_Pack(13, PySequence_Fast_GET_ITEM(seq, i), table, logtotal, route, on,
                                      off ? off : Py_None, pos ? pos : Py_None, tags, runs, pos_runs, pos_block,
                                      hmm_cache, pos_cache);
        PyObject *r = call ? zh_cut(self, call) : NULL;
        Py_XDECREF(call);
        if (r == NULL) {
            Py_DECREF(on);
            goto done;
        }
        Py_DECREF(r);
        Py_ssize_t m = PyList_GET_SIZE(on), kept = 0;
        PyObject *kept_words = PyTuple_New(m);
        if (kept_words == NULL) {
            Py_DECREF(on);
            goto done;
        }
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *token = PyList_GET_ITEM(on, j);
            if (!is_blank(token)) {
                Py_INCREF(token);
                PyTuple_SET_ITEM(kept_words, kept++, token);
            }
        }
        Py_DECREF(on);
        if (kept < m && _PyTuple_Resize(&kept_words, kept) < 0)
            goto done;
        PyTuple_SET_ITEM(words, i, kept_words);
    }
    out = PyTuple_Pack(3, words, off ? off : Py_None, pos ? pos : Py_None);
done:
    Py_XDECREF(words);
    Py_XDECREF(off);
    Py_XDECREF(pos);
    Py_DECREF(seq);
    return out;
}

/* ---------------------------------------------------------------------------------------
 * jieba.posseg's Viterbi (jieba/posseg/viterbi.py) over tables loaded once (posseg_tables).
 *
 * States are numbered in Python's sorted order of their (position, tag) tuples, so "the
 * larger state" of a tie is the larger number, as in the original's max over (prob, state)
 * tuples. Each step: previous states with transitions; the states they may lead to; those
 * the character allows (char_state_tab), or all that may follow, or every state; each
 * scored (V[t-1][y0] + trans(y0, y, -inf)) + emit(y, char, -3.14e100), best previous state
 * kept. The same additions in the same order as Python's floats, so the same path.
 */
#define POS_MIN_FLOAT (-3.14e100)

static struct {
    int n;                 /* states */
    PyObject *states;      /* list of the state tuples, in order */
    PyObject *index;       /* state tuple -> int */
    PyObject *emit;        /* list of dicts char -> log prob, per state */
    PyObject *char_states; /* dict char -> bytes of uint16 state numbers */
    double *start;
    double *trans;         /* n * n, -inf when absent */
    char *has_trans;       /* n * n */
    char *is_key;          /* the state is a key of trans_p (all_states) */
    int *n_next;           /* len(trans_p[x]) */
} pos_tab;

static void
pos_free(void)
{
    Py_CLEAR(pos_tab.states);
    Py_CLEAR(pos_tab.index);
    Py_CLEAR(pos_tab.emit);
    Py_CLEAR(pos_tab.char_states);
    PyMem_Free(pos_tab.start);
    PyMem_Free(pos_tab.trans);
    PyMem_Free(pos_tab.has_trans);
    PyMem_Free(pos_tab.is_key);
    PyMem_Free(pos_tab.n_next);
    memset(&pos_tab, 0, sizeof(pos_tab));
}

static int
state_number(PyObject *state)
{
    PyObject *v = PyDict_GetItemWithError(pos_tab.index, state);
    if (v == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_KeyError, "unknown part-of-speech state");
        return -1;
    }
    return (int)PyLong_AsLong(v);
}

static PyObject *
zh_posseg_tables(PyObject *self, PyObject *args)
{
    PyObject *states, *char_state, *start_p, *trans_p, *emit_p;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!", &PyList_Type, &states, &PyDict_Type, &char_state,
                          &PyDict_Type, &start_p, &PyDict_Type, &trans_p, &PyDict_Type, &emit_p))
        return NULL;
    pos_free();
    int n = (int)PyList_GET_SIZE(states);
    if (n <= 0 || n > 65535) {
        PyErr_SetString(PyExc_ValueError, "1 to 65535 states");
        return NULL;
    }
    pos_tab.n = n;
    Py_INCREF(states);
    pos_tab.states = states;
    pos_tab.index = PyDict_New();
    pos_tab.emit = PyList_New(n);
    pos_tab.char_states = PyDict_New();
    pos_tab.start = PyMem_Calloc(n, sizeof(double));
    pos_tab.trans = PyMem_Calloc((size_t)n * n, sizeof(double));
    pos_tab.has_trans = PyMem_Calloc((size_t)n * n, 1);
    pos_tab.is_key = PyMem_Calloc(n, 1);
    pos_tab.n_next = PyMem_Calloc(n, sizeof(int));
    if (!pos_tab.index || !pos_tab.emit || !pos_tab.char_states || !pos_tab.start || !pos_tab.trans ||
        !pos_tab.has_trans || !pos_tab.is_key || !pos_tab.n_next) {
        PyErr_NoMemory();
        goto error;
    }
    for (int i = 0; i < n; i++) {
        PyObject *num = PyLong_FromLong(i);
        if (num == NULL || PyDict_SetItem(pos_tab.index, PyList_GET_ITEM(states, i), num) < 0) {
            Py_XDECREF(num);
            goto error;
        }
        Py_DECREF(num);
    }
    for (int i = 0; i < n; i++) {
        PyObject *state = PyList_GET_ITEM(states, i);
        PyObject *v = PyDict_GetItemWithError(start_p, state);
        if (v == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_KeyError, "a state without a start probability");
            goto error;
        }
        pos_tab.start[i] = PyFloat_AsDouble(v);
        PyObject *e = PyDict_GetItemWithError(emit_p, state);
        if (e == NULL) {
            if (PyErr_Occurred())
                goto error;
            e = PyDict_New();  /* no emissions: every character gets MIN_FLOAT */
            if (e == NULL)
                goto error;
        } else {
            if (!PyDict_Check(e)) {
                PyErr_SetString(PyExc_TypeError, "emission tables must be dicts");
                goto error;
            }
            Py_INCREF(e);
        }
        PyList_SET_ITEM(pos_tab.emit, i, e);
        for (int j = 0; j < n; j++)
            pos_tab.trans[(size_t)i * n + j] = -INFINITY;
        PyObject *t = PyDict_GetItemWithError(trans_p, state);
        if (t == NULL) {
            if (PyErr_Occurred())
                goto error;
            continue;
        }
        if (!PyDict_Check(t)) {
            PyErr_SetString(PyExc_TypeError, "transition tables must be dicts");
            goto error;
        }
        pos_tab.is_key[i] = 1;
        pos_tab.n_next[i] = (int)PyDict_GET_SIZE(t);
        Py_ssize_t at = 0;
        PyObject *key, *val;
        while (PyDict_Next(t, &at, &key, &val)) {
            int j = state_number(key);
            if (j < 0)
                goto error;
            pos_tab.trans[(size_t)i * n + j] = PyFloat_AsDouble(val);
            pos_tab.has_trans[(size_t)i * n + j] = 1;
        }
    }
    Py_ssize_t at = 0;
    PyObject *ch, *tuple;
    while (PyDict_Next(char_state, &at, &ch, &tuple)) {
        PyObject *seq = PySequence_Fast(tuple, "char_state_tab values must be sequences");
        if (seq == NULL)
            goto error;
        Py_ssize_t m = PySequence_Fast_GET_SIZE(seq);
        PyObject *bytes = PyBytes_FromStringAndSize(NULL, m * 2);
        if (bytes == NULL) {
            Py_DECREF(seq);
            goto error;
        }
        unsigned char *out = (unsigned char *)PyBytes_AS_STRING(bytes);
        for (Py_ssize_t k = 0; k < m; k++) {
            int j = state_number(PySequence_Fast_GET_ITEM(seq, k));
            if (j < 0) {
                Py_DECREF(seq);
                Py_DECREF(bytes);
                goto error;
            }
            out[2 * k] = (unsigned char)(j & 0xff);
            out[2 * k + 1] = (unsigned char)(j >> 8);
        }
        Py_DECREF(seq);
        int r = PyDict_SetItem(pos_tab.char_states, ch, bytes);
        Py_DECREF(bytes);
        if (r < 0)
            goto error;
    }
    Py_RETURN_NONE;
error:
    pos_free();
    return NULL;
}

/* emit(y, char) as the original's emit_p[y].get(char, MIN_FLOAT) */
static int
emit_of(int y, PyObject *ch, double *out)
{
    PyObject *v = PyDict_GetItemWithError(PyList_GET_ITEM(pos_tab.emit, y), ch);
    if (v == NULL) {
        if (PyErr_Occurred())
            return -1;
        *out = POS_MIN_FLOAT;
        return 0;
    }
    *out = PyFloat_AsDouble(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

/* The states char `ch` allows, as flags in `allowed`; 0 when the table has no entry. */
static int
allowed_states(PyObject *ch, char *allowed)
{
    PyObject *b = PyDict_GetItemWithError(pos_tab.char_states, ch);
    if (b == NULL)
        return PyErr_Occurred() ? -1 : 0;
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(b);
    Py_ssize_t m = PyBytes_GET_SIZE(b) / 2;
    for (Py_ssize_t k = 0; k < m; k++)
        allowed[p[2 * k] | (p[2 * k + 1] << 8)] = 1;
    return 1;
}

static PyObject *
zh_posseg_viterbi(PyObject *self, PyObject *args)
{
    PyObject *obs;
    if (!PyArg_ParseTuple(args, "U", &obs))
        return NULL;
    int n = pos_tab.n;
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "posseg_tables() was not called");
        return NULL;
    }
    Py_ssize_t T = PyUnicode_GET_LENGTH(obs);
    if (T == 0)
        return PyList_New(0);
    double *V = PyMem_Malloc((size_t)T * n * sizeof(double));
    int *back = PyMem_Malloc((size_t)T * n * sizeof(int));
    char *present = PyMem_Calloc((size_t)T * n, 1);
    char *allowed = PyMem_Malloc(n);
    char *expect = PyMem_Malloc(n);
    int *prev = PyMem_Malloc(n * sizeof(int));
    PyObject *route = NULL, *ch = NULL;
    if (!V || !back || !present || !allowed || !expect || !prev) {
        PyErr_NoMemory();
        goto done;
    }
    ch = PyUnicode_Substring(obs, 0, 1);
    if (ch == NULL)
        goto done;
    memset(allowed, 0, n);
    int found = allowed_states(ch, allowed);
    if (found < 0)
        goto done;
    for (int y = 0; y < n; y++) {
        if (found ? !allowed[y] : !pos_tab.is_key[y])
            continue;
        double e;
        if (emit_of(y, ch, &e) < 0)
            goto done;
        V[y] = pos_tab.start[y] + e;
        back[y] = -1;
        present[y] = 1;
    }
    Py_CLEAR(ch);
    for (Py_ssize_t t = 1; t < T; t++) {
        const double *Vp = V + (size_t)(t - 1) * n;
        const char *pp = present + (size_t)(t - 1) * n;
        double *Vt = V + (size_t)t * n;
        int *bt = back + (size_t)t * n;
        char *pt = present + (size_t)t * n;
        int n_prev = 0;
        memset(expect, 0, n);
        int any_expect = 0;
        for (int x = 0; x < n; x++) {
            if (pp[x] && pos_tab.n_next[x] > 0) {
                prev[n_prev++] = x;
                const char *h = pos_tab.has_trans + (size_t)x * n;
                for (int y = 0; y < n; y++)
                    if (h[y]) {
                        expect[y] = 1;
                        any_expect = 1;
                    }
            }
        }
        ch = PyUnicode_Substring(obs, t, t + 1);
        if (ch == NULL)
            goto done;
        memset(allowed, 0, n);
        found = allowed_states(ch, allowed);
        if (found < 0)
            goto done;
        int any = 0;
        for (int y = 0; y < n; y++) {  /* set(states.get(char, all_states)) & expected */
            allowed[y] = (found ? allowed[y] : pos_tab.is_key[y]) && expect[y];
            any |= allowed[y];
        }
        if (!any) {
            for (int y = 0; y < n; y++)
                allowed[y] = any_expect ? expect[y] : pos_tab.is_key[y];
        }
        for (int y = 0; y < n; y++) {
            if (!allowed[y])
                continue;
            if (n_prev == 0) {
                PyErr_SetString(PyExc_ValueError, "max() arg is an empty sequence");
                goto done;
            }
            double e;
            if (emit_of(y, ch, &e) < 0)
                goto done;
            double best = 0.0;
            int arg = -1;
            for (int k = 0; k < n_prev; k++) {
                int y0 = prev[k];
                double s = (Vp[y0] + pos_tab.trans[(size_t)y0 * n + y]) + e;
                if (arg < 0 || s > best || (s == best && y0 > arg)) {
                    best = s;
                    arg = y0;
                }
            }
            Vt[y] = best;
            bt[y] = arg;
            pt[y] = 1;
        }
        Py_CLEAR(ch);
    }
    {
        const double *Vl = V + (size_t)(T - 1) * n;
        const char *pl = present + (size_t)(T - 1) * n;
        int state = -1;
        double best = 0.0;
        for (int y = 0; y < n; y++) {
            if (pl[y] && (state < 0 || Vl[y] > best || (Vl[y] == best && y > state))) {
                best = Vl[y];
                state = y;
            }
        }
        if (state < 0) {
            PyErr_SetString(PyExc_ValueError, "max() arg is an empty sequence");
            goto done;
        }
        route = PyList_New(T);
        if (route == NULL)
            goto done;
        for (Py_ssize_t i = T - 1; i >= 0; i--) {
            PyObject *st = PyList_GET_ITEM(pos_tab.states, state);
            Py_INCREF(st);
            PyList_SET_ITEM(route, i, st);
            state = back[(size_t)i * n + state];
            if (i > 0 && state < 0) {
                Py_CLEAR(route);
                PyErr_SetString(PyExc_RuntimeError, "broken Viterbi back-pointer");
                goto done;
            }
        }
    }
done:
    Py_XDECREF(ch);
    PyMem_Free(V);
    PyMem_Free(back);
    PyMem_Free(present);
    PyMem_Free(allowed);
    PyMem_Free(expect);
    PyMem_Free(prev);
    return route;
}


/* ---------------------------------------------------------------------------------------
 * oph(chars, n, bins, seed) -> bytes: annotators.core.near_dup.oph_of_codes over the code
 * points of `chars` (whitespace already removed), bins x uint64 little-endian. The same
 * uint64 arithmetic in the same order: polynomial shingle hash (x 1000003), splitmix64 of
 * it xor seed, sorted; each bin's smallest hash; empty bins take the next filled bin to the
 * right (circular) plus distance x 0x9E3779B97F4A7C15.
 * ------------------------------------------------------------------------------------- */
static PyObject *
zh_oph(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_ssize_t n, bins;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "UnnK", &text, &n, &bins, &seed))
        return NULL;
    if (bins <= 0 || (bins & (bins - 1)) || n < 0) {
        PyErr_SetString(PyExc_ValueError, "oph needs a power-of-two number of bins");
        return NULL;
    }
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t m = len - n + 1;
    if (m < 1) {
        m = 1;
        n = len;
    }
    uint64_t *value = PyMem_Malloc(sizeof(uint64_t) * (size_t)bins);
    unsigned char *full = PyMem_Calloc((size_t)bins, 1);
    if (!value || !full) {
        PyMem_Free(value); PyMem_Free(full);
        return PyErr_NoMemory();
    }
    int bits = 0;
    for (Py_ssize_t b = bins; b; b >>= 1)
        bits++;
    int shift = 64 - bits + 1;
    /* the window hash sum_j c[i+j] * P^(n-1-j) (mod 2^64), rolled along the text */
    uint64_t top = 1;  /* P^(n-1) */
    for (Py_ssize_t j = 1; j < n; j++)
        top *= 1000003ULL;
    uint64_t x = 0;
    for (Py_ssize_t j = 0; j < n; j++)
        x = x * 1000003ULL + (uint64_t)PyUnicode_READ(kind, data, j);
    for (Py_ssize_t i = 0; i < m; i++) {
        if (i) {
            x = (x - (uint64_t)PyUnicode_READ(kind, data, i - 1) * top) * 1000003ULL
                + (uint64_t)PyUnicode_READ(kind, data, i + n - 1);
        }
        uint64_t y = (x ^ (uint64_t)seed) + 0x9E3779B97F4A7C15ULL;
        y = (y ^ (y >> 30)) * 0xBF58476D1CE4E5B9ULL;
        y = (y ^ (y >> 27)) * 0x94D049BB133111EBULL;
        y ^= y >> 31;
        Py_ssize_t b = (Py_ssize_t)(y >> shift);  /* each bin keeps its smallest hash */
        if (!full[b] || y < value[b]) {
            value[b] = y;
            full[b] = 1;
        }
    }
    Py_ssize_t first_full = 0;
    while (!full[first_full])
        first_full++;
    Py_ssize_t donor = -1;
    for (Py_ssize_t b = bins - 1; b >= 0; b--) {  /* densify from the next filled bin to the right */
        if (full[b]) {
            donor = b;
            continue;
        }
        Py_ssize_t d = donor < 0 ? first_full : donor;  /* none to the right: wrap around */
        uint64_t distance = (uint64_t)(donor < 0 ? first_full + bins - b : donor - b);
        value[b] = value[d] + distance * 0x9E3779B97F4A7C15ULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, bins * 8);
    if (out) {
        unsigned char *o = (unsigned char *)PyBytes_AS_STRING(out);
        for (Py_ssize_t b = 0; b < bins; b++)
            for (int k = 0; k < 8; k++)
                o[b * 8 + k] = (unsigned char)(value[b] >> (8 * k));
    }
    PyMem_Free(value); PyMem_Free(full);
    return out;
}

/* ---------------------------------------------------------------------------------------
 * shingle_keys(chars, n) -> bytes: the set annotators.core.near_dup.shingles makes (the
 * n-grams of `chars`, whitespace already removed; the whole text when it has n characters or
 * fewer; nothing when empty) as sorted distinct 16-byte keys, one per distinct shingle. A
 * key holds each character's code point + 1 in 21 bits, first character highest, so two
 * shingles have equal keys exactly when they are equal strings (n <= 6: 126 bits).
 * common_keys(a, b) -> the number of keys two such sets share (a sorted merge).
 * ------------------------------------------------------------------------------------- */
typedef unsigned __int128 key128;

static void
sort_keys(key128 *k, Py_ssize_t n)
{
    /* quicksort (median of three, the smaller side recursed) down to runs of 16, then one
     * insertion pass: no comparator calls */
    while (n > 16) {
        key128 a = k[0], b = k[n / 2], c = k[n - 1];
        key128 pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        Py_ssize_t i = 0, j = n - 1;
        for (;;) {
            while (k[i] < pivot) i++;
            while (k[j] > pivot) j--;
            if (i >= j) break;
            key128 t = k[i]; k[i] = k[j]; k[j] = t;
            i++; j--;
        }
        Py_ssize_t left = j + 1;
        if (left < n - left) {
            sort_keys(k, left);
            k += left; n -= left;
        } else {
            sort_keys(k + left, n - left);
            n = left;
        }
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        key128 v = k[i];
        Py_ssize_t j = i;
        while (j > 0 && k[j - 1] > v) {
            k[j] = k[j - 1];
            j--;
        }
        k[j] = v;
    }
}

static PyObject *
zh_shingle_keys(PyObject *self, PyObject *args)
{
    PyObject *text;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "Un", &text, &n))
        return NULL;
    if (n < 1 || n > 6) {
        PyErr_SetString(PyExc_ValueError, "shingle_keys takes shingles of 1 to 6 characters");
        return NULL;
    }
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (len == 0)
        return PyBytes_FromStringAndSize(NULL, 0);
    Py_ssize_t width = len <= n ? len : n;
    Py_ssize_t m = len <= n ? 1 : len - n + 1;
    key128 *keys = PyMem_Malloc(sizeof(key128) * (size_t)m);
    if (!keys)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < m; i++) {
        key128 k = 0;
        for (Py_ssize_t j = 0; j < n; j++) {
            k <<= 21;
            if (j < width)
                k |= (key128)(PyUnicode_READ(kind, data, i + j) + 1);
        }
        keys[i] = k;
    }
    sort_keys(keys, m);
    Py_ssize_t distinct = 0;
    for (Py_ssize_t i = 0; i < m; i++)
        if (!distinct || keys[i] != keys[distinct - 1])
            keys[distinct++] = keys[i];
    PyObject *out = PyBytes_FromStringAndSize((const char *)keys, distinct * (Py_ssize_t)sizeof(key128));
    PyMem_Free(keys);
    return out;
}

static PyObject *
zh_common_keys(PyObject *self, PyObject *args)
{
    Py_buffer a, b;
    if (!PyArg_ParseTuple(args, "y*y*", &a, &b))
        return NULL;
    Py_ssize_t na = a.len / (Py_ssize_t)sizeof(key128), nb = b.len / (Py_ssize_t)sizeof(key128);
    const unsigned char *pa = a.buf, *pb = b.buf;
    Py_ssize_t i = 0, j = 0, common = 0;
    while (i < na && j < nb) {
        key128 x, y;
        memcpy(&x, pa + i * sizeof(key128), sizeof x);
        memcpy(&y, pb + j * sizeof(key128), sizeof y);
        if (x == y) {
            common++; i++; j++;
        } else if (x < y) {
            i++;
        } else {
            j++;
        }
    }
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    return PyLong_FromSsize_t(common);
}

/* han_count(text) -> the number of characters of annotators.text.zh_clean.HAN
 * (U+3400-U+4DBF, U+4E00-U+9FFF, U+F900-U+FAFF) in text. */
static PyObject *
zh_han_count(PyObject *self, PyObject *arg)
{
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "han_count takes a str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg), count = 0;
    int kind = PyUnicode_KIND(arg);
    if (kind == PyUnicode_1BYTE_KIND)
        return PyLong_FromLong(0);
    const void *data = PyUnicode_DATA(arg);
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        count += (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF);
    }
    return PyLong_FromSsize_t(count);
}

/* posrake_scored(tagged, delim_tags, breaks, is_break, max_words) -> {phrase: (score, words)}:
 * annotators.lot.outline.posrake_ranked before its sort. tagged: (word, tag) pairs. A word
 * ends a phrase when its tag is in delim_tags, else when breaks[word] is true (a missing word
 * is looked up with is_break(word) and stored in breaks). RAKE word statistics over every
 * phrase: frequency, and degree (the summed lengths of the phrases the word occurs in); a
 * phrase of at most max_words words scores the sum over its words of degree / frequency, in
 * order (the same double operations as Python's), stored under its words joined; a string
 * met again keeps its first place and takes the later score (a dict assignment). */
static PyObject *
zh_posrake_scored(PyObject *self, PyObject *args)
{
    PyObject *tagged, *delim_tags, *breaks, *is_break;
    Py_ssize_t max_words;
    if (!PyArg_ParseTuple(args, "OOO!On", &tagged, &delim_tags, &PyDict_Type, &breaks, &is_break, &max_words))
        return NULL;
    if (!PyAnySet_Check(delim_tags)) {
        PyErr_SetString(PyExc_TypeError, "posrake_scored: delim_tags must be a set or frozenset");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(tagged, "posrake_scored: tagged must be a sequence");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject **words = PyMem_Malloc(sizeof(PyObject *) * (n + 1));
    Py_ssize_t *ids = PyMem_Malloc(sizeof(Py_ssize_t) * (n + 1));
    Py_ssize_t *starts = PyMem_Malloc(sizeof(Py_ssize_t) * (n + 1));
    Py_ssize_t *lens = PyMem_Malloc(sizeof(Py_ssize_t) * (n + 1));
    long *freq = PyMem_Malloc(sizeof(long) * (n + 1));
    long *degree = PyMem_Malloc(sizeof(long) * (n + 1));
    PyObject *index = PyDict_New(), *result = NULL, *empty = NULL;
    if (!words || !ids || !starts || !lens || !freq || !degree || !index) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n_words = 0, n_phrases = 0, run_start = 0, n_ids = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = items[i];
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_SetString(PyExc_TypeError, "posrake_scored: tagged items must be (word, tag) tuples");
            goto done;
        }
        PyObject *word = PyTuple_GET_ITEM(item, 0), *tag = PyTuple_GET_ITEM(item, 1);
        int ends = PySet_Contains(delim_tags, tag);
        if (ends < 0)
            goto done;
        if (!ends) {
            PyObject *v = PyDict_GetItemWithError(breaks, word);  /* borrowed */
            if (v == NULL) {
                if (PyErr_Occurred())
                    goto done;
                v = PyObject_CallOneArg(is_break, word);
                if (v == NULL)
                    goto done;
                int r = PyDict_SetItem(breaks, word, v);
                ends = r < 0 ? -1 : PyObject_IsTrue(v);
                Py_DECREF(v);
            } else {
                ends = PyObject_IsTrue(v);
            }
            if (ends < 0)
                goto done;
        }
        if (ends) {
            if (n_words > run_start) {
                starts[n_phrases] = run_start;
                lens[n_phrases++] = n_words - run_start;
            }
            run_start = n_words;
            continue;
        }
        PyObject *id = PyDict_GetItemWithError(index, word);  /* borrowed */
        Py_ssize_t k;
        if (id == NULL) {
            if (PyErr_Occurred())
                goto done;
            k = n_ids++;
            PyObject *num = PyLong_FromSsize_t(k);
            if (num == NULL)
                goto done;
            int r = PyDict_SetItem(index, word, num);
            Py_DECREF(num);
            if (r < 0)
                goto done;
            freq[k] = degree[k] = 0;
        } else {
            k = PyLong_AsSsize_t(id);
        }
        words[n_words] = word;
        ids[n_words++] = k;
    }
    /* a run left open at the end is not a phrase (nothing delimited it) */
    for (Py_ssize_t p = 0; p < n_phrases; p++)
        for (Py_ssize_t j = starts[p]; j < starts[p] + lens[p]; j++) {
            freq[ids[j]] += 1;
            degree[ids[j]] += (long)lens[p];
        }
    result = PyDict_New();
    empty = PyUnicode_FromStringAndSize("", 0);
    if (result == NULL || empty == NULL)
        goto done;
    for (Py_ssize_t p = 0; p < n_phrases; p++) {
        if (lens[p] > max_words)
            continue;
        double score = 0.0;
        PyObject *phrase = PyTuple_New(lens[p]);
        if (phrase == NULL)
            goto fail;
        for (Py_ssize_t j = 0; j < lens[p]; j++) {
            Py_ssize_t w = starts[p] + j;
            score += (double)degree[ids[w]] / (double)freq[ids[w]];
            Py_INCREF(words[w]);
            PyTuple_SET_ITEM(phrase, j, words[w]);
        }
        PyObject *joined = PyUnicode_Join(empty, phrase);
        PyObject *value = joined ? Py_BuildValue("(dO)", score, phrase) : NULL;
        int r = value ? PyDict_SetItem(result, joined, value) : -1;
        Py_XDECREF(joined);
        Py_XDECREF(value);
        Py_DECREF(phrase);
        if (r < 0)
            goto fail;
    }
    goto done;
fail:
    Py_CLEAR(result);
done:
    Py_XDECREF(empty);
    Py_XDECREF(index);
    PyMem_Free(words);
    PyMem_Free(ids);
    PyMem_Free(starts);
    PyMem_Free(lens);
    PyMem_Free(freq);
    PyMem_Free(degree);
    Py_DECREF(seq);
    return result;
}

/* word_counts(sentences) -> [n, ...]: for each token sequence, how many of its tokens hold a
 * letter, digit or other alphanumeric character (str.isalnum of one of its characters):
 * annotators.text.words.count_words of each. */
static PyObject *
zh_word_counts(PyObject *self, PyObject *arg)
{
    PyObject *seq = PySequence_Fast(arg, "word_counts takes a sequence of token sequences");
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *tokens = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, i), "word_counts: a sentence must be a sequence");
        if (tokens == NULL)
            goto fail;
        Py_ssize_t m = PySequence_Fast_GET_SIZE(tokens), count = 0;
        PyObject **items = PySequence_Fast_ITEMS(tokens);
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *t = items[j];
            if (!PyUnicode_Check(t)) {
                Py_DECREF(tokens);
                PyErr_SetString(PyExc_TypeError, "word_counts: tokens must be str");
                goto fail;
            }
            Py_ssize_t len = PyUnicode_GET_LENGTH(t);
            int kind = PyUnicode_KIND(t);
            const void *data = PyUnicode_DATA(t);
            for (Py_ssize_t k = 0; k < len; k++)
                if (Py_UNICODE_ISALNUM(PyUnicode_READ(kind, data, k))) {
                    count++;
                    break;
                }
        }
        Py_DECREF(tokens);
        PyList_SET_ITEM(out, i, PyLong_FromSsize_t(count));
    }
    Py_DECREF(seq);
    return out;
fail:
    Py_DECREF(seq);
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"oph", zh_oph, METH_VARARGS, "oph(chars, n, bins, seed) -> bytes: near_dup.oph_of_codes of the code points"},
    {"shingle_keys", zh_shingle_keys, METH_VARARGS,
     "shingle_keys(chars, n) -> bytes: near_dup.shingles(chars, n) as sorted distinct 16-byte keys"},
    {"common_keys", zh_common_keys, METH_VARARGS, "common_keys(a, b) -> how many keys two shingle_keys sets share"},
    {"freq_table", zh_freq_table, METH_VARARGS, "freq_table(freq) -> capsule: FREQ copied for route_table"},
    {"freq_table_bytes", zh_freq_table_bytes, METH_VARARGS, "freq_table_bytes(table) -> bytes (this build's cache form)"},
    {"freq_table_from_bytes", zh_freq_table_from_bytes, METH_VARARGS, "freq_table_from_bytes(data) -> table"},
    {"freq_has_count", zh_freq_has_count, METH_VARARGS, "freq_has_count(table, word) -> bool(FREQ.get(word))"},
    {"freq_table_tags", zh_freq_table_tags, METH_VARARGS,
     "freq_table_tags(table, tags): tag the table's entries from a word -> tag dict, for cut()"},
    {"route_table", zh_route_table, METH_VARARGS,
     "route_table(table, block, logtotal) -> ends: `route` over a freq_table"},
    {"han_count", zh_han_count, METH_O, "han_count(text) -> how many characters of zh_clean.HAN it holds"},
    {"word_counts", zh_word_counts, METH_O, "word_counts(sentences) -> [words.count_words(tokens) per sentence]"},
    {"cut", zh_cut, METH_VARARGS,
     "cut(text, table, logtotal, route, on, off, pos, tags, runs, pos_runs, pos_block[, hmm_cache, pos_cache]): "
     "Segmenter._cut"},
    {"cut_many", zh_cut_many, METH_VARARGS,
     "cut_many(sentences, table, logtotal, route, want_off, want_pos, tags, runs, pos_runs, pos_block, hmm_cache, "
     "pos_cache) -> (non-blank HMM-on words per sentence, HMM-off tokens, posseg pairs)"},
    {"walk", zh_walk, METH_VARARGS,
     "walk(block, ends, on, off, pos, tags, runs, pos_runs[, hmm_cache, pos_cache]): tokens along a route"},
    {"posseg_tables", zh_posseg_tables, METH_VARARGS,
     "posseg_tables(states, char_state, start, trans, emit): load jieba.posseg's HMM"},
    {"posrake_scored", zh_posrake_scored, METH_VARARGS,
     "posrake_scored(tagged, delim_tags, breaks, is_break, max_words) -> {phrase: (score, words)}"},
    {"posseg_viterbi", zh_posseg_viterbi, METH_VARARGS,
     "posseg_viterbi(text) -> the best state per character (jieba.posseg.viterbi's route)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_zhcut",
                                    "Native jieba cut, posseg Viterbi, near-duplicate hashing and Han counts (see zh_tokens.py)", -1, methods};

PyMODINIT_FUNC
PyInit__zhcut(void)
{
    return PyModule_Create(&module);
}
