/* pbtools._tokens: a tokenizer for clean run files (the compiled half of pbtools.io.direct).
 *
 * run_columns(data) reads a run file's bytes (gunzipped, CRLF already made LF) in one pass and
 * returns (rows, qid_offsets, qid_data, docno_offsets, docno_data, scores, tag), the buffers of
 * two Arrow string arrays (int32 offsets), the scores as float64 (a bytearray) and the run tag,
 * or None for anything but the common case.  It accepts a strict subset of what pyarrow's typed
 * CSV read in pbtools.io.direct accepts, with the same values:
 *
 *   - every line exactly six fields separated by runs of spaces/TABs, leading and trailing
 *     blanks allowed (uniform_blanks makes them so) -- except in a file without any space,
 *     which the Arrow path reads as TAB-separated as it is: single TABs only there;
 *   - only printable ASCII inside fields (a byte >= 0x7f or a control byte other than TAB/LF:
 *     None), no blank line, one run tag;
 *   - rank and score plain decimals, [+-]?digits[.digits]([eE][+-]?digits)?;
 *   - scores finite; a zero only when written as one (its literal's rule is Python's, as in
 *     the typed read: read_tokens checks it); an underflow or an overflow: None; correctly
 *     rounded: Clinger's exact fast path (mantissa <= 2^53, |exponent| <= 22), else
 *     strtod_l with the "C" locale (glibc's strtod is correctly rounded, like Arrow's
 *     fast_float).
 *
 * The GIL is released while the bytes are read (pbtools parses files on several threads).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the "C" locale for strtod_l, made once (0 when newlocale failed: then only the fast path) */
static locale_t c_locale = (locale_t)0;

enum { BAD = 0, BLANK = 1, EOL = 2, CHAR = 3 };
static unsigned char cls[256];

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* the longest score literal handed to strtod_l */
#define LITERAL_MAX 128

#define IS_DIGIT(c) ((unsigned char)((c) - '0') < 10)

/* 1 when p[0:n] is [+-]?digits[.digits]([eE][+-]?digits)?, else 0 */
static int
plain_decimal(const unsigned char *p, Py_ssize_t n)
{
    Py_ssize_t i = 0, d;
    if (i < n && (p[i] == '+' || p[i] == '-'))
        i++;
    d = i;
    while (i < n && IS_DIGIT(p[i]))
        i++;
    if (i == d)
        return 0;
    if (i < n && p[i] == '.') {
        d = ++i;
        while (i < n && IS_DIGIT(p[i]))
            i++;
        if (i == d)
            return 0;
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-'))
            i++;
        d = i;
        while (i < n && IS_DIGIT(p[i]))
            i++;
        if (i == d)
            return 0;
    }
    return i == n;
}

/* the value of a plain decimal p[0:n] into *out: 1, or 0 when it is not a plain decimal,
 * underflows to zero, is not finite, or cannot be converted exactly here */
static int
parse_score(const unsigned char *p, Py_ssize_t n, double *out)
{
    Py_ssize_t i = 0, d;
    int neg = 0, sig = 0, inexact = 0;
    uint64_t m = 0;
    int64_t exp10 = 0;
    double v;

    if (i < n && (p[i] == '+' || p[i] == '-')) {
        neg = p[i] == '-';
        i++;
    }
    d = i;
    for (; i < n && IS_DIGIT(p[i]); i++) {
        unsigned c = p[i] - '0';
        if (m == 0 && c == 0)
            continue; /* a leading zero */
        if (sig < 19) {
            m = m * 10 + c;
            sig++;
        }
        else {
            exp10++; /* a digit beyond 19 significant ones: dropped, the value scaled */
            inexact |= c != 0;
        }
    }
    if (i == d)
        return 0;
    if (i < n && p[i] == '.') {
        d = ++i;
        for (; i < n && IS_DIGIT(p[i]); i++) {
            unsigned c = p[i] - '0';
            if (m == 0 && c == 0) {
                exp10--;
                continue;
            }
            if (sig < 19) {
                m = m * 10 + c;
                sig++;
                exp10--;
            }
            else
                inexact |= c != 0;
        }
        if (i == d)
            return 0;
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        int eneg = 0;
        int64_t e = 0;
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) {
            eneg = p[i] == '-';
            i++;
        }
        d = i;
        for (; i < n && IS_DIGIT(p[i]); i++)
            if (e < 1000000)
                e = e * 10 + (p[i] - '0');
        if (i == d)
            return 0;
        exp10 += eneg ? -e : e;
    }
    if (i != n)
        return 0;
    if (m == 0) {
        /* a zero literal (every digit 0): +-0.0 as Arrow reads it, and a zero of the
         * zero-literal rule (pbtools.io.fields' _ZERO; pbtools.io.direct relies on this) */
        *out = neg ? -0.0 : 0.0;
        return 1;
    }
    if (!inexact && m <= ((uint64_t)1 << 53) && exp10 >= -22 && exp10 <= 22) {
        /* Clinger: m and 10^|exp10| are exact doubles, one correctly rounded operation */
        v = (double)m;
        if (exp10 < 0)
            v /= pow10_exact[-exp10];
        else
            v *= pow10_exact[exp10];
        *out = neg ? -v : v;
        return 1;
    }
    if (c_locale == (locale_t)0 || n >= LITERAL_MAX)
        return 0;
    {
        char buf[LITERAL_MAX];
        char *end;
        memcpy(buf, p, (size_t)n);
        buf[n] = '\0';
        v = strtod_l(buf, &end, c_locale);
        if (end != buf + n || v == 0.0 || !isfinite(v))
            return 0; /* an underflow to zero or an overflow */
    }
    *out = v;
    return 1;
}

typedef struct {
    const unsigned char *data;
    Py_ssize_t size;
    Py_ssize_t rows;  /* lines in the file (line ends, plus a last line without one) */
    int tabs_only;    /* the file holds no space: fields separated by one TAB, nothing else */
    int32_t *qoff;    /* rows + 1 */
    int32_t *doff;    /* rows + 1 */
    double *score;    /* rows */
    const unsigned char *tag;
    Py_ssize_t tag_len;
} Scan;

/* every line checked, its score parsed and its qid and docno lengths summed into the offsets:
 * 0, or -1 when the file is not the common case */
static int
scan_lines(Scan *s)
{
    const unsigned char *p = s->data, *end = s->data + s->size;
    Py_ssize_t row = 0;
    int64_t qt = 0, dt = 0;

    s->qoff[0] = 0;
    s->doff[0] = 0;
    while (p < end) {
        const unsigned char *f[6];
        Py_ssize_t len[6];
        int k = 0;
        if (row >= s->rows)
            return -1;
        if (cls[*p] == BLANK) {
            if (s->tabs_only)
                return -1; /* the TAB-separated read would see an empty first field */
            while (p < end && cls[*p] == BLANK)
                p++;
        }
        while (p < end) {
            const unsigned char *q = p;
            unsigned char c = cls[*p];
            if (c == EOL)
                break;
            if (c != CHAR || k == 6)
                return -1;
            while (p < end && cls[*p] == CHAR)
                p++;
            f[k] = q;
            len[k] = p - q;
            k++;
            if (p == end)
                break;
            c = cls[*p];
            if (c == EOL)
                break;
            if (c != BLANK)
                return -1;
            p++;
            if (s->tabs_only) {
                if (p == end || cls[*p] != CHAR)
                    return -1; /* two TABs, or one at the end of a line */
            }
            else
                while (p < end && cls[*p] == BLANK)
                    p++;
        }
        if (k != 6)
            return -1; /* a blank line, or another field count */
        if (!plain_decimal(f[3], len[3]) || !parse_score(f[4], len[4], &s->score[row]))
            return -1;
        if (row == 0) {
            s->tag = f[5];
            s->tag_len = len[5];
        }
        else if (len[5] != s->tag_len || memcmp(f[5], s->tag, (size_t)len[5]) != 0)
            return -1;
        qt += len[0];
        dt += len[2];
        if (qt > INT32_MAX || dt > INT32_MAX)
            return -1;
        row++;
        s->qoff[row] = (int32_t)qt;
        s->doff[row] = (int32_t)dt;
        if (p < end)
            p++; /* the line end */
    }
    return row == s->rows ? 0 : -1;
}

/* the qids and docnos of a file scan_lines accepted copied into their data buffers */
static void
copy_ids(const Scan *s, char *qdata, char *ddata)
{
    const unsigned char *p = s->data, *end = s->data + s->size;
    Py_ssize_t row;
    for (row = 0; row < s->rows; row++) {
        Py_ssize_t n;
        while (cls[*p] == BLANK)
            p++;
        n = s->qoff[row + 1] - s->qoff[row];
        memcpy(qdata + s->qoff[row], p, (size_t)n);
        p += n;
        while (cls[*p] == BLANK)
            p++;
        while (cls[*p] == CHAR)
            p++; /* q0 */
        while (cls[*p] == BLANK)
            p++;
        n = s->doff[row + 1] - s->doff[row];
        memcpy(ddata + s->doff[row], p, (size_t)n);
        p += n;
        if (row + 1 < s->rows) {
            p = memchr(p, '\n', (size_t)(end - p));
            p++;
        }
    }
}

static Py_ssize_t
count_lines(const unsigned char *p, Py_ssize_t size)
{
    const unsigned char *end = p + size;
    Py_ssize_t n = 0;
    while (p < end) {
        const unsigned char *q = memchr(p, '\n', (size_t)(end - p));
        if (q == NULL)
            return n + 1; /* a last line without a line end */
        n++;
        p = q + 1;
    }
    return n;
}

PyDoc_STRVAR(run_columns_doc,
             "run_columns(data, /)\n--\n\n"
             "(rows, qid_offsets, qid_data, docno_offsets, docno_data, scores, tag) of a clean "
             "run file's bytes, or None (see pbtools.io.direct).");

static PyObject *
run_columns(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    Scan s;
    PyObject *qoff = NULL, *doff = NULL, *score = NULL, *qdata = NULL, *ddata = NULL;
    PyObject *tag = NULL, *result = NULL;
    int bad;
    (void)self;

    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    memset(&s, 0, sizeof s);
    s.data = (const unsigned char *)view.buf;
    s.size = view.len;
    if (s.size == 0)
        goto none;
    Py_BEGIN_ALLOW_THREADS
    s.rows = count_lines(s.data, s.size);
    s.tabs_only = memchr(s.data, ' ', (size_t)s.size) == NULL;
    Py_END_ALLOW_THREADS
    /* a run line holds at least 11 bytes and its line end: more lines than that cannot be a
     * clean file (a file of blank lines would otherwise allocate 16 bytes a byte) */
    if (s.rows > (s.size + 1) / 12 || s.rows > (PY_SSIZE_T_MAX / 8) - 1)
        goto none;
    qoff = PyBytes_FromStringAndSize(NULL, (s.rows + 1) * 4);
    doff = PyBytes_FromStringAndSize(NULL, (s.rows + 1) * 4);
    score = PyByteArray_FromStringAndSize(NULL, s.rows * 8);
    if (qoff == NULL || doff == NULL || score == NULL)
        goto error;
    s.qoff = (int32_t *)PyBytes_AS_STRING(qoff);
    s.doff = (int32_t *)PyBytes_AS_STRING(doff);
    s.score = (double *)PyByteArray_AS_STRING(score);
    Py_BEGIN_ALLOW_THREADS
    bad = scan_lines(&s);
    Py_END_ALLOW_THREADS
    if (bad)
        goto none;
    qdata = PyBytes_FromStringAndSize(NULL, s.qoff[s.rows]);
    ddata = PyBytes_FromStringAndSize(NULL, s.doff[s.rows]);
    tag = PyUnicode_DecodeASCII((const char *)s.tag, s.tag_len, NULL);
    if (qdata == NULL || ddata == NULL || tag == NULL)
        goto error;
    {
        char *qd = PyBytes_AS_STRING(qdata), *dd = PyBytes_AS_STRING(ddata);
        Py_BEGIN_ALLOW_THREADS
        copy_ids(&s, qd, dd);
        Py_END_ALLOW_THREADS
    }
    result = Py_BuildValue("(nOOOOOO)", s.rows, qoff, qdata, doff, ddata, score, tag);
    goto done;
none:
    result = Py_NewRef(Py_None);
    goto done;
error:
    result = NULL;
done:
    Py_XDECREF(qoff);
    Py_XDECREF(doff);
    Py_XDECREF(score);
    Py_XDECREF(qdata);
    Py_XDECREF(ddata);
    Py_XDECREF(tag);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef methods[] = {
    {"run_columns", run_columns, METH_O, run_columns_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "pbtools._tokens",
    "The compiled tokenizer of clean run files (pbtools.io.direct; pbtools.native loads it).",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__tokens(void)
{
    int c;
    for (c = 0; c < 256; c++)
        cls[c] = (c > 0x20 && c < 0x7f) ? CHAR : BAD;
    cls[' '] = BLANK;
    cls['\t'] = BLANK;
    cls['\n'] = EOL;
    if (c_locale == (locale_t)0)
        c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    return PyModule_Create(&module);
}
