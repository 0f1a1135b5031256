/*
 * csv — RFC 4180 records (see csv.h).
 *
 * One pass per record over the raw bytes: the unquoted contents of every field are
 * appended to one buffer, each followed by a NUL so a caller may treat a field without
 * NULs as a C string, and the field table points into it once the record is complete
 * (the buffer may move while it grows). Nothing is read past the text's length.
 */
#include "config.h"
#include "csv.h"
#include "vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void csv_init(struct csv *c, const char *text, size_t len)
{
	memset(c, 0, sizeof(*c));
	/* a UTF-8 byte order mark (spreadsheets write one) is not part of the first field */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		text += 3;
		len -= 3;
	}
	c->p = text;
	c->end = text + len;
	c->next_line = 1;
	strbuf_init(&c->buf);
}

void csv_release(struct csv *c)
{
	strbuf_release(&c->buf);
	free(c->f);
	free(c->off);
	memset(c, 0, sizeof(*c));
}

/* Ends the field that started at buf offset start. */
static int end_field(struct csv *c, size_t start, bool quoted)
{
	if (c->n == c->cap) {
		/* two arrays of one capacity: the second grows to what the first got */
		int cap_f = c->cap, cap_off = c->cap;

		if (VEC_RESERVE(c->f, cap_f, c->n + 1L) < 0 || VEC_RESERVE(c->off, cap_off, cap_f) < 0)
			return -1;
		c->cap = cap_f;
	}
	c->off[c->n] = start;
	c->f[c->n].len = c->buf.len - start;
	c->f[c->n].quoted = quoted;
	c->n++;
	strbuf_addch(&c->buf, '\0');
	return strbuf_failed(&c->buf) ? -1 : 0;
}

int csv_next(struct csv *c, const char *file, struct err *e)
{
	const char *p = c->p, *end = c->end;

	if (p >= end)
		return 0;
	c->n = 0;
	c->line = c->next_line;
	strbuf_reset(&c->buf);
	for (;;) {
		size_t start = c->buf.len;
		bool quoted = p < end && *p == '"';

		if (quoted) {
			long opened = c->next_line;

			for (p++;; p++) {
				if (p >= end)
					return err_set(e, ERR_INPUT, "%s: line %ld: quoted field is never closed", file, opened);
				if (*p == '"') {
					if (p + 1 < end && p[1] == '"') {
						strbuf_addch(&c->buf, '"');
						p++;
						continue;
					}
					p++;
					break;
				}
				if (*p == '\n')
					c->next_line++;
				strbuf_addch(&c->buf, *p);
			}
			if (p < end && *p == '\r' && p + 1 < end && p[1] == '\n')
				p++;
			if (p < end && *p != ',' && *p != '\n')
				return err_set(e, ERR_INPUT, "%s: line %ld: text after the closing quote of a field", file,
				               c->next_line);
		} else {
			const char *q = p;

			while (q < end && *q != ',' && *q != '\n')
				q++;
			/* CRLF: the CR belongs to the line end, not to the field */
			strbuf_add(&c->buf, p, (size_t)(q - p - (q < end && *q == '\n' && q > p && q[-1] == '\r')));
			p = q;
		}
		if (end_field(c, start, quoted) < 0)
			return err_set(e, ERR_RUNTIME, "%s: out of host memory", file);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end) { /* '\n' */
			p++;
			c->next_line++;
		}
		break;
	}
	c->p = p;
	for (int i = 0; i < c->n; i++)
		c->f[i].s = c->buf.buf + c->off[i];
	return 1;
}

const char *csv_printable(char *out, size_t n, const char *s, size_t len, size_t max)
{
	size_t o = 0;

	if (n == 0)
		return out;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		char tmp[8];
		size_t k;

		if (ch == '\n')
			k = (size_t)snprintf(tmp, sizeof(tmp), "\\n");
		else if (ch == '\t')
			k = (size_t)snprintf(tmp, sizeof(tmp), "\\t");
		else if (ch == '\\' || ch == '\'')
			k = (size_t)snprintf(tmp, sizeof(tmp), "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			k = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", ch);
		else
			k = (size_t)snprintf(tmp, sizeof(tmp), "%c", ch);
		if (o + k > max || o + k + 4 > n) {
			if (o + 4 <= n) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		memcpy(out + o, tmp, k);
		o += k;
	}
	out[o < n ? o : n - 1] = '\0';
	return out;
}
