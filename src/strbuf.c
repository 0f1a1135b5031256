/*
 * strbuf — growable text buffer (see strbuf.h). Growth is geometric so appending a
 * character at a time stays linear; the first failed allocation marks the buffer and
 * later appends become no-ops, which keeps error handling at call sites to one check.
 */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char strbuf_empty[1] = "";

void strbuf_init(struct strbuf *sb)
{
	sb->buf = (char *)strbuf_empty;
	sb->len = 0;
	sb->alloc = 0;
	sb->oom = false;
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb);
}

char *strbuf_detach(struct strbuf *sb)
{
	char *s;

	if (sb->oom) {
		strbuf_release(sb);
		return NULL;
	}
	s = sb->alloc ? sb->buf : strdup("");
	strbuf_init(sb);
	return s;
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->alloc)
		sb->buf[0] = '\0';
}

bool strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t want, cap;
	char *p;

	if (sb->oom)
		return false;
	if (extra > (size_t)-1 / 2 - sb->len) {
		sb->oom = true;
		return false;
	}
	want = sb->len + extra + 1;
	if (want <= sb->alloc)
		return true;
	cap = sb->alloc ? sb->alloc : 64;
	while (cap < want)
		cap *= 2;
	p = sb->alloc ? realloc(sb->buf, cap) : malloc(cap);
	if (!p) {
		sb->oom = true;
		return false;
	}
	if (!sb->alloc)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = cap;
	return true;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t n)
{
	if (!strbuf_grow(sb, n))
		return;
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, char c)
{
	strbuf_add(sb, &c, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || !strbuf_grow(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_pad(struct strbuf *sb, char c, size_t n)
{
	if (!strbuf_grow(sb, n))
		return;
	memset(sb->buf + sb->len, c, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void strbuf_truncate(struct strbuf *sb, size_t len)
{
	if (len < sb->len) {
		sb->len = len;
		sb->buf[len] = '\0';
	}
}

size_t strbuf_utf8_len(const unsigned char *s, size_t n, unsigned *cp)
{
	size_t len, i;
	unsigned c = s[0], min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2; c &= 0x1f; min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3; c &= 0x0f; min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4; c &= 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

bool utf8_reorders(unsigned cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

void strbuf_add_printable(struct strbuf *sb, const char *s, size_t n, bool keep_newlines)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned cp;
		size_t len = strbuf_utf8_len(p + i, n - i, &cp);

		if (len == 0) {
			strbuf_addf(sb, "\\x%02x", p[i]);
			i++;
			continue;
		}
		if (cp == '\n' && keep_newlines)
			strbuf_addch(sb, '\n');
		else if (cp < 0x20 || cp == 0x7f)
			strbuf_addf(sb, "\\x%02x", cp);
		else if ((cp >= 0x80 && cp <= 0x9f) || utf8_reorders(cp))
			strbuf_addf(sb, "\\u%04x", cp);
		else
			strbuf_add(sb, p + i, len);
		i += len;
	}
}

void str_fit_middle(char *out, size_t cap, const char *text, size_t n)
{
	static const char mid[] = " ... ";
	size_t head = (cap - 1) / 3, tail;

	if (n < cap) {
		memcpy(out, text, n);
		out[n] = '\0';
		return;
	}
	tail = cap - 1 - head - (sizeof(mid) - 1);
	while (head > 0 && ((unsigned char)text[head] & 0xc0) == 0x80)
		head--;
	while (tail > 0 && ((unsigned char)text[n - tail] & 0xc0) == 0x80)
		tail--;
	memcpy(out, text, head);
	memcpy(out + head, mid, sizeof(mid) - 1);
	memcpy(out + head + sizeof(mid) - 1, text + n - tail, tail);
	out[head + sizeof(mid) - 1 + tail] = '\0';
}

char *str_name_with_suffix(const char *base, const char *suffix, size_t max)
{
	size_t nb = strlen(base), ns = strlen(suffix), keep = nb;
	char *out;

	if (ns > max)
		ns = max;
	if (keep > max - ns) {
		keep = max - ns;
		while (keep > 0 && ((unsigned char)base[keep] & 0xc0) == 0x80)
			keep--; /* base[keep] would start the cut: back to a character's first byte */
	}
	if (!(out = malloc(keep + ns + 1)))
		return NULL;
	memcpy(out, base, keep);
	memcpy(out + keep, suffix, ns);
	out[keep + ns] = '\0';
	return out;
}

bool str_is_utf8(const char *s, size_t n)
{
	unsigned cp;

	for (size_t i = 0; i < n;) {
		size_t k = strbuf_utf8_len((const unsigned char *)s + i, n - i, &cp);

		if (k == 0)
			return false;
		i += k;
	}
	return true;
}
