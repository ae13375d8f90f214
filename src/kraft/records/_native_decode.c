/* kraft.records._native_decode: the records of RecordBatch v2 bodies decoded straight into
 * column buffers (Arrow's layouts), with no Python object per record; and record_values, the
 * values alone, which is all a raft listener is handed for a committed batch.
 *
 * What it owns: the per-record walk of an uncompressed (or already decompressed) batch body, as
 * kraft.records.batch._decode_records_checked does it, for the common shape of a record: no
 * headers. What it must not do: judge a batch. Every batch-level check (length, magic, CRC,
 * offsets, epochs, torn tails) stays in Python, and so does every error message: on anything
 * unusual (record headers, a value starting with the caller's "decode me in Python" byte, an
 * offset or timestamp that does not fit int64 microseconds, or any byte sequence the checked
 * decoder would reject) add_batch declines, appends nothing, and the caller decodes that batch
 * in Python, which gives the same rows or the same error.
 *
 * Invariant: every read is bounds-checked against [start, end) of the caller's buffer; a declined
 * batch leaves the builder exactly as it was. Plain C99 and the CPython C API; no dependency.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

/* The smallest encoded record: length, attributes, timestampDelta, offsetDelta, key length, value
 * length and header count, one byte each (batch.py's MIN_RECORD_SIZE). */
#define MIN_RECORD_SIZE 7

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t extra) {
    if (extra > PY_SSIZE_T_MAX - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t need = b->len + extra;
    if (need <= b->cap) {
        return 0;
    }
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < need) {
        cap = cap > PY_SSIZE_T_MAX / 2 ? need : cap * 2;
    }
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

/* One nullable binary column in Arrow's layout: validity bits, rows + 1 int32 offsets, data. */
typedef struct {
    Buf validity;
    Buf offsets;
    Buf data;
    Py_ssize_t nulls;
} BinaryColumn;

typedef struct {
    PyObject_HEAD
    Py_ssize_t rows;
    Buf offset;    /* int64 */
    Buf epoch;     /* int32 */
    Buf base;      /* int64 */
    Buf timestamp; /* int64, microseconds */
    BinaryColumn key;
    BinaryColumn value;
} ColumnBuilder;

static void binary_free(BinaryColumn *c) {
    PyMem_Free(c->validity.data);
    PyMem_Free(c->offsets.data);
    PyMem_Free(c->data.data);
    memset(c, 0, sizeof(*c));
}

static void builder_free_buffers(ColumnBuilder *self) {
    PyMem_Free(self->offset.data);
    PyMem_Free(self->epoch.data);
    PyMem_Free(self->base.data);
    PyMem_Free(self->timestamp.data);
    memset(&self->offset, 0, sizeof(Buf));
    memset(&self->epoch, 0, sizeof(Buf));
    memset(&self->base, 0, sizeof(Buf));
    memset(&self->timestamp, 0, sizeof(Buf));
    binary_free(&self->key);
    binary_free(&self->value);
    self->rows = 0;
}

/* Room for `rows` more rows in every fixed-width buffer and `bytes` more bytes in each data buffer. */
static int builder_reserve(ColumnBuilder *self, Py_ssize_t rows, Py_ssize_t bytes) {
    Py_ssize_t total = self->rows + rows;
    Py_ssize_t bits = (total + 7) / 8 - self->key.validity.len;
    if (buf_reserve(&self->offset, rows * 8) || buf_reserve(&self->epoch, rows * 4) ||
        buf_reserve(&self->base, rows * 8) || buf_reserve(&self->timestamp, rows * 8) ||
        buf_reserve(&self->key.validity, bits > 0 ? bits : 0) ||
        buf_reserve(&self->value.validity, bits > 0 ? bits : 0) ||
        buf_reserve(&self->key.offsets, (rows + 1) * 4) ||
        buf_reserve(&self->value.offsets, (rows + 1) * 4) || buf_reserve(&self->key.data, bytes) ||
        buf_reserve(&self->value.data, bytes)) {
        return -1;
    }
    return 0;
}

/* Row `row` of a binary column: len bytes at src, or null when len < 0. Capacity was reserved by
 * builder_reserve. Each row sets or clears its own validity bit (a byte is zeroed at its first
 * row), so rows rolled back by a declined batch leave nothing behind. */
static void binary_put(BinaryColumn *c, Py_ssize_t row, const uint8_t *src, int64_t len) {
    Py_ssize_t byte = row / 8;
    uint8_t bit = (uint8_t)(1u << (row % 8));
    if (row % 8 == 0) {
        c->validity.data[byte] = 0;
    }
    int32_t end;
    if (len < 0) {
        c->validity.data[byte] &= (uint8_t)~bit;
        c->nulls++;
    } else {
        c->validity.data[byte] |= bit;
        memcpy(c->data.data + c->data.len, src, (size_t)len);
        c->data.len += (Py_ssize_t)len;
    }
    end = (int32_t)c->data.len;
    memcpy(c->offsets.data + (row + 1) * 4, &end, 4);
}

/* Reader.unsigned_varint: at most max_bytes base-128 groups, the value within 32 bits (max_bytes 5)
 * or 64 bits (max_bytes 10). 0 where the Python reader would raise. */
static inline int read_uvarint(const uint8_t *p, Py_ssize_t *pos, Py_ssize_t end, int max_bytes,
                               uint64_t *out) {
    Py_ssize_t at = *pos;
    if (at < end && p[at] < 0x80) {
        *out = p[at];
        *pos = at + 1;
        return 1;
    }
    uint64_t value = 0;
    int shift = 0;
    for (int i = 0; i < max_bytes; i++) {
        if (at >= end) {
            return 0;
        }
        uint8_t b = p[at++];
        uint64_t part = b & 0x7F;
        if (shift == 63 && part > 1) {
            return 0; /* bits beyond 64: Python's "value does not fit 64 bits" */
        }
        value |= part << shift;
        if (!(b & 0x80)) {
            if (max_bytes <= 5 && (value >> 32)) {
                return 0;
            }
            *out = value;
            *pos = at;
            return 1;
        }
        shift += 7;
    }
    return 0;
}

static inline int64_t unzigzag(uint64_t n) { return (int64_t)(n >> 1) ^ -(int64_t)(n & 1); }

static int add_overflows(int64_t a, int64_t b, int64_t *out) {
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) {
        return 1;
    }
    *out = a + b;
    return 0;
}

static int ms_to_us_overflows(int64_t ms, int64_t *out) {
    if (ms > INT64_MAX / 1000 || ms < INT64_MIN / 1000) {
        return 1;
    }
    *out = ms * 1000;
    return 0;
}

/* One record of a batch body at *pos (its length varint first), read as the checked Python
 * decoder reads it, in the one shape decoded here: no headers. 1: read, and *pos is past it; 0:
 * anything else (the caller declines the batch). */
typedef struct {
    int64_t timestamp_delta;
    int64_t offset_delta;
    Py_ssize_t key_at;
    int64_t key_len; /* -1: null */
    Py_ssize_t value_at;
    int64_t value_len; /* -1: null */
} PlainRecord;

static inline int read_plain_record(const uint8_t *p, Py_ssize_t *pos, Py_ssize_t end, PlainRecord *r) {
    uint64_t u;
    Py_ssize_t at = *pos;
    if (!read_uvarint(p, &at, end, 5, &u)) {
        return 0;
    }
    int64_t length = unzigzag(u);
    if (length < 0 || length > end - at) {
        return 0;
    }
    Py_ssize_t record_end = at + (Py_ssize_t)length;
    if (record_end - at < 1) {
        return 0; /* no attributes byte */
    }
    at += 1; /* attributes: unused */
    if (!read_uvarint(p, &at, record_end, 10, &u)) {
        return 0;
    }
    r->timestamp_delta = unzigzag(u);
    if (!read_uvarint(p, &at, record_end, 5, &u)) {
        return 0;
    }
    r->offset_delta = unzigzag(u);
    if (!read_uvarint(p, &at, record_end, 5, &u)) {
        return 0;
    }
    r->key_len = unzigzag(u);
    r->key_at = at;
    if (r->key_len >= 0) {
        if (r->key_len > record_end - at) {
            return 0;
        }
        at += (Py_ssize_t)r->key_len;
    }
    if (!read_uvarint(p, &at, record_end, 5, &u)) {
        return 0;
    }
    r->value_len = unzigzag(u);
    r->value_at = at;
    if (r->value_len >= 0) {
        if (r->value_len > record_end - at) {
            return 0;
        }
        at += (Py_ssize_t)r->value_len;
    }
    /* Header count: only records without headers are read here. */
    if (!read_uvarint(p, &at, record_end, 5, &u) || u != 0 || at != record_end) {
        return 0;
    }
    *pos = at;
    return 1;
}

/* The batch's fields that the rows need, and what the caller asked for. */
typedef struct {
    int64_t base_offset;
    int64_t leader_epoch;
    int64_t records_count;
    int64_t base_timestamp;
    int has_log_append_time;
    int64_t log_append_time;
    int has_row_offset;
    int64_t row_offset;
    int python_value_byte; /* -1: none */
} BatchInfo;

/* Decode records [start, end) of p into the builder. 1: appended; 0: declined (the builder is
 * restored); -1: a Python error (memory). */
static int decode_into(ColumnBuilder *self, const uint8_t *p, Py_ssize_t start, Py_ssize_t end,
                       const BatchInfo *info) {
    Py_ssize_t n = end - start;
    int64_t count = info->records_count;
    if (count < 0 || count > n / MIN_RECORD_SIZE) {
        return 0;
    }
    /* Arrow binary offsets are int32: keep every piece well below 2 GiB. */
    if (self->key.data.len > INT32_MAX - n || self->value.data.len > INT32_MAX - n) {
        return 0;
    }
    if (self->rows == 0) {
        int32_t zero = 0;
        if (buf_reserve(&self->key.offsets, 4) || buf_reserve(&self->value.offsets, 4)) {
            return -1;
        }
        memcpy(self->key.offsets.data, &zero, 4);
        memcpy(self->value.offsets.data, &zero, 4);
    }
    if (builder_reserve(self, (Py_ssize_t)count, n)) {
        return -1;
    }
    /* What to restore on decline; the fixed-width buffers' lengths only move on success. */
    Py_ssize_t rows0 = self->rows;
    Py_ssize_t key_len0 = self->key.data.len, value_len0 = self->value.data.len;
    Py_ssize_t key_nulls0 = self->key.nulls, value_nulls0 = self->value.nulls;
    int64_t timestamp_us = 0;
    if (info->has_log_append_time && ms_to_us_overflows(info->log_append_time, &timestamp_us)) {
        return 0;
    }
    int32_t epoch = (int32_t)info->leader_epoch;
    Py_ssize_t pos = start;
    PlainRecord rec;
    for (int64_t i = 0; i < count; i++) {
        if (!read_plain_record(p, &pos, end, &rec)) {
            goto decline;
        }
        int64_t timestamp_delta = rec.timestamp_delta, offset_delta = rec.offset_delta;
        Py_ssize_t key_at = rec.key_at, value_at = rec.value_at;
        int64_t key_len = rec.key_len, value_len = rec.value_len;
        if (value_len > 0 && info->python_value_byte >= 0 && p[value_at] == info->python_value_byte) {
            goto decline;
        }
        int64_t offset;
        if (info->has_row_offset) {
            offset = info->row_offset;
        } else if (add_overflows(info->base_offset, offset_delta, &offset)) {
            goto decline;
        }
        if (!info->has_log_append_time) {
            int64_t timestamp_ms;
            if (add_overflows(info->base_timestamp, timestamp_delta, &timestamp_ms) ||
                ms_to_us_overflows(timestamp_ms, &timestamp_us)) {
                goto decline;
            }
        }
        Py_ssize_t row = self->rows;
        memcpy(self->offset.data + row * 8, &offset, 8);
        memcpy(self->epoch.data + row * 4, &epoch, 4);
        memcpy(self->base.data + row * 8, &info->base_offset, 8);
        memcpy(self->timestamp.data + row * 8, &timestamp_us, 8);
        binary_put(&self->key, row, p + key_at, key_len);
        binary_put(&self->value, row, p + value_at, value_len);
        self->rows = row + 1;
    }
    if (pos != end) {
        goto decline;
    }
    self->offset.len = self->rows * 8;
    self->epoch.len = self->rows * 4;
    self->base.len = self->rows * 8;
    self->timestamp.len = self->rows * 8;
    self->key.offsets.len = (self->rows + 1) * 4;
    self->value.offsets.len = (self->rows + 1) * 4;
    self->key.validity.len = self->value.validity.len = (self->rows + 7) / 8;
    return 1;

decline:
    self->rows = rows0;
    self->key.data.len = key_len0;
    self->value.data.len = value_len0;
    self->key.nulls = key_nulls0;
    self->value.nulls = value_nulls0;
    return 0;
}

static int as_int64(PyObject *o, const char *what, int64_t *out) {
    long long v = PyLong_AsLongLong(o);
    if (v == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_OverflowError, "%s must be an int64", what);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

static int as_optional_int64(PyObject *o, const char *what, int *has, int64_t *out) {
    *has = o != Py_None;
    *out = 0;
    return *has ? as_int64(o, what, out) : 0;
}

PyDoc_STRVAR(add_batch_doc,
             "add_batch(data, start, end, base_offset, leader_epoch, records_count, base_timestamp,\n"
             "          log_append_time, row_offset, python_value_byte, /) -> bool\n"
             "\n"
             "Append the rows of the records in data[start:end] (an uncompressed RecordBatch v2 body)\n"
             "and return True, or return False and append nothing when the batch must be decoded in\n"
             "Python: a record with headers, a value whose first byte is python_value_byte (-1: none),\n"
             "an offset or microsecond timestamp outside int64, or bytes the checked decoder rejects.\n"
             "log_append_time: the batch's maxTimestamp for LogAppendTime batches, else None;\n"
             "row_offset: the offset every row carries (a snapshot's), else None.");

static PyObject *builder_add_batch(ColumnBuilder *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 10) {
        PyErr_Format(PyExc_TypeError, "add_batch() takes 10 positional arguments (%zd given)", nargs);
        return NULL;
    }
    int64_t start, end, python_value_byte;
    BatchInfo info;
    if (as_int64(args[1], "start", &start) || as_int64(args[2], "end", &end) ||
        as_int64(args[3], "base_offset", &info.base_offset) ||
        as_int64(args[4], "leader_epoch", &info.leader_epoch) ||
        as_int64(args[5], "records_count", &info.records_count) ||
        as_int64(args[6], "base_timestamp", &info.base_timestamp) ||
        as_optional_int64(args[7], "log_append_time", &info.has_log_append_time,
                          &info.log_append_time) ||
        as_optional_int64(args[8], "row_offset", &info.has_row_offset, &info.row_offset) ||
        as_int64(args[9], "python_value_byte", &python_value_byte)) {
        return NULL;
    }
    if (info.leader_epoch < INT32_MIN || info.leader_epoch > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "leader_epoch must be an int32");
        return NULL;
    }
    info.python_value_byte = python_value_byte >= 0 && python_value_byte <= 255 ? (int)python_value_byte : -1;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    if (start < 0 || start > end || end > view.len) {
        PyBuffer_Release(&view);
        PyErr_Format(PyExc_ValueError, "records [%lld, %lld) lie outside a buffer of %zd bytes",
                     (long long)start, (long long)end, view.len);
        return NULL;
    }
    int done = decode_into(self, (const uint8_t *)view.buf, (Py_ssize_t)start, (Py_ssize_t)end, &info);
    PyBuffer_Release(&view);
    if (done < 0) {
        return NULL;
    }
    return PyBool_FromLong(done);
}

static PyObject *bytes_of(const Buf *b, Py_ssize_t len) {
    return PyBytes_FromStringAndSize(len ? b->data : NULL, len);
}

PyDoc_STRVAR(take_doc,
             "take() -> (rows, offset, leader_epoch, batch_base_offset, timestamp_us,\n"
             "           key_validity, key_offsets, key_data, value_validity, value_offsets, value_data)\n"
             "\n"
             "The rows gathered so far as Arrow buffers (bytes; a validity is None without nulls),\n"
             "and an empty builder.");

static PyObject *builder_take(ColumnBuilder *self, PyObject *Py_UNUSED(ignored)) {
    Py_ssize_t rows = self->rows;
    Py_ssize_t bits = (rows + 7) / 8;
    int32_t zero = 0;
    if (rows == 0) {
        /* No rows: offsets still need their leading 0. */
        if (buf_reserve(&self->key.offsets, 4) || buf_reserve(&self->value.offsets, 4)) {
            return NULL;
        }
        memcpy(self->key.offsets.data, &zero, 4);
        memcpy(self->value.offsets.data, &zero, 4);
    }
    PyObject *out = PyTuple_New(11);
    if (out == NULL) {
        return NULL;
    }
    PyObject *items[11] = {
        PyLong_FromSsize_t(rows),
        bytes_of(&self->offset, rows * 8),
        bytes_of(&self->epoch, rows * 4),
        bytes_of(&self->base, rows * 8),
        bytes_of(&self->timestamp, rows * 8),
        self->key.nulls ? bytes_of(&self->key.validity, bits) : Py_NewRef(Py_None),
        bytes_of(&self->key.offsets, (rows + 1) * 4),
        bytes_of(&self->key.data, self->key.data.len),
        self->value.nulls ? bytes_of(&self->value.validity, bits) : Py_NewRef(Py_None),
        bytes_of(&self->value.offsets, (rows + 1) * 4),
        bytes_of(&self->value.data, self->value.data.len),
    };
    int failed = 0;
    for (int i = 0; i < 11; i++) {
        failed |= items[i] == NULL;
        PyTuple_SET_ITEM(out, i, items[i]); /* a NULL item is allowed until the tuple is freed */
    }
    if (failed) {
        Py_DECREF(out);
        return NULL;
    }
    self->rows = 0;
    self->offset.len = self->epoch.len = self->base.len = self->timestamp.len = 0;
    self->key.validity.len = self->key.offsets.len = self->key.data.len = 0;
    self->value.validity.len = self->value.offsets.len = self->value.data.len = 0;
    self->key.nulls = self->value.nulls = 0;
    return out;
}

static Py_ssize_t builder_len(ColumnBuilder *self) { return self->rows; }

static PyObject *builder_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    if (PyTuple_GET_SIZE(args) || (kwargs && PyDict_GET_SIZE(kwargs))) {
        PyErr_SetString(PyExc_TypeError, "ColumnBuilder() takes no arguments");
        return NULL;
    }
    /* tp_alloc zero-fills: every buffer starts empty. */
    return type->tp_alloc(type, 0);
}

static void builder_dealloc(ColumnBuilder *self) {
    builder_free_buffers(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMethodDef builder_methods[] = {
    {"add_batch", (PyCFunction)(void (*)(void))builder_add_batch, METH_FASTCALL, add_batch_doc},
    {"take", (PyCFunction)builder_take, METH_NOARGS, take_doc},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods builder_as_sequence = {
    .sq_length = (lenfunc)builder_len,
};

PyDoc_STRVAR(builder_doc,
             "ColumnBuilder()\n"
             "\n"
             "Rows of record batches gathered as Arrow column buffers: offset, leader_epoch,\n"
             "batch_base_offset, timestamp (microseconds), key and value. Not thread-safe.");

static PyTypeObject ColumnBuilderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "kraft.records._native_decode.ColumnBuilder",
    .tp_basicsize = sizeof(ColumnBuilder),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = builder_doc,
    .tp_new = builder_new,
    .tp_dealloc = (destructor)builder_dealloc,
    .tp_methods = builder_methods,
    .tp_as_sequence = &builder_as_sequence,
};

/* record_values(data, start, end, base_offset, records_count, from_offset): the values of the
 * records in data[start:end] (a batch body) whose offset is at least from_offset, a null value as
 * b"", or None where the batch must be decoded in Python. This is what a raft listener is handed
 * for each committed batch (kraft.raft.listener.CommittedBatch.records), without a Record object
 * per record. It accepts exactly the records decode_into accepts, so a batch it takes is one the
 * checked Python decoder takes with the same values. */
static PyObject *record_values(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "record_values takes 6 arguments");
        return NULL;
    }
    int64_t start, end, base_offset, count, from_offset;
    if (as_int64(args[1], "start", &start) || as_int64(args[2], "end", &end) ||
        as_int64(args[3], "base_offset", &base_offset) || as_int64(args[4], "records_count", &count) ||
        as_int64(args[5], "from_offset", &from_offset)) {
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    PyObject *out = NULL;
    PyObject *values = NULL;
    if (start < 0 || end < start || end > view.len) {
        PyErr_SetString(PyExc_ValueError, "record_values: [start, end) is outside the buffer");
        goto done;
    }
    const uint8_t *p = (const uint8_t *)view.buf;
    Py_ssize_t n = (Py_ssize_t)(end - start);
    if (count < 0 || count > n / MIN_RECORD_SIZE) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    values = PyList_New(0);
    if (values == NULL) {
        goto done;
    }
    Py_ssize_t pos = (Py_ssize_t)start;
    PlainRecord rec;
    for (int64_t i = 0; i < count; i++) {
        if (!read_plain_record(p, &pos, (Py_ssize_t)end, &rec)) {
            goto decline;
        }
        int64_t offset;
        if (add_overflows(base_offset, rec.offset_delta, &offset)) {
            goto decline;
        }
        Py_ssize_t value_at = rec.value_at;
        int64_t value_len = rec.value_len;
        if (offset < from_offset) {
            continue;
        }
        PyObject *value = PyBytes_FromStringAndSize((const char *)p + value_at,
                                                    value_len > 0 ? (Py_ssize_t)value_len : 0);
        if (value == NULL) {
            goto done;
        }
        int failed = PyList_Append(values, value);
        Py_DECREF(value);
        if (failed) {
            goto done;
        }
    }
    if (pos != (Py_ssize_t)end) {
        goto decline;
    }
    out = PyList_AsTuple(values);
    goto done;

decline:
    out = Py_NewRef(Py_None);
done:
    Py_XDECREF(values);
    PyBuffer_Release(&view);
    return out;
}

static const char record_values_doc[] =
    "record_values(data, start, end, base_offset, records_count, from_offset, /)\n--\n\n"
    "The values (null as b\"\") of the records in data[start:end] with offset >= from_offset, or\n"
    "None where the batch must be decoded in Python.";

static PyMethodDef module_methods[] = {
    {"record_values", (PyCFunction)(void (*)(void))record_values, METH_FASTCALL, record_values_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "kraft.records._native_decode",
    .m_doc = "RecordBatch v2 records decoded into Arrow column buffers (see ColumnBuilder), or into\n"
             "the tuple of values a raft listener is handed (record_values).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__native_decode(void) {
    if (PyType_Ready(&ColumnBuilderType) < 0) {
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    if (PyModule_AddObjectRef(m, "ColumnBuilder", (PyObject *)&ColumnBuilderType) < 0 ||
        PyModule_AddIntConstant(m, "MIN_RECORD_SIZE", MIN_RECORD_SIZE) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
