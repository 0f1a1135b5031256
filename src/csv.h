/*
 * csv — RFC 4180 records over length-delimited text, for the CSV readers (PyTorch's
 * schedule CSV, profile records). Fields are separated by commas and records by LF or
 * CRLF; a field that starts with a double quote runs to the matching closing quote and
 * may hold commas, line breaks and doubled quotes (""). A quote inside an unquoted field
 * is kept as it is. The text may hold any bytes, NUL included: fields carry a length.
 *
 *   struct csv c;
 *   csv_init(&c, text, len);
 *   while ((r = csv_next(&c, file, e)) > 0)
 *       ... c.n fields c.f[0..n-1], the record starts on line c.line ...
 *   csv_release(&c);
 */
#ifndef OCTO_CSV_H
#define OCTO_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "strbuf.h"

struct csv_field {
	const char *s;              /* the unquoted bytes, NUL-terminated (may hold NULs too) */
	size_t len;
	bool quoted;
};

struct csv {
	const char *p, *end;        /* what is left to read */
	long line;                  /* line on which the current record starts (1-based) */
	long next_line;
	int n;                      /* fields of the current record */
	struct csv_field *f;        /* valid until the next csv_next() */
	int cap;
	struct strbuf buf;          /* the current record's unquoted fields */
	size_t *off;
};

void csv_init(struct csv *c, const char *text, size_t len);
/* Reads the next record: 1 (c->n >= 1 fields), 0 at the end of the text, or -1 with
 * "FILE: line N: problem" in e (a quote never closed, text after a closing quote, out of
 * memory). An empty line is a record of one empty field. */
int csv_next(struct csv *c, const char *file, struct err *e);
void csv_release(struct csv *c);

/* s (len bytes, any bytes) for a one-line message: control bytes, quotes and backslashes
 * escaped C-style, cut to about max bytes with "..." when longer. Returns out (n bytes). */
const char *csv_printable(char *out, size_t n, const char *s, size_t len, size_t max);

#endif
