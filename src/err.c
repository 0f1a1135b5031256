/* err — error messages with a class (see err.h). */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A message longer than the buffer keeps its start (the file) and its end (what is wrong)
 * and loses the middle of a long path: cutting the end lost the reason, so a 4000-byte
 * path's error said nothing. */
#define ERR_LONG (4 * 4096 + 1024)

static void fit(struct err *e, const char *text, size_t n)
{
	size_t cap = sizeof(e->msg) - 1, head = cap / 3, tail;
	static const char mid[] = " ... ";

	if (n <= cap) {
		memcpy(e->msg, text, n + 1);
		return;
	}
	tail = cap - head - (sizeof(mid) - 1);
	/* whole UTF-8 characters only: no cut inside one */
	while (head > 0 && ((unsigned char)text[head] & 0xc0) == 0x80)
		head--;
	while (tail > 0 && ((unsigned char)text[n - tail] & 0xc0) == 0x80)
		tail--;
	memcpy(e->msg, text, head);
	memcpy(e->msg + head, mid, sizeof(mid) - 1);
	memcpy(e->msg + head + sizeof(mid) - 1, text + n - tail, tail + 1);
}

int err_set(struct err *e, enum err_class cls, const char *fmt, ...)
{
	char tmp[ERR_LONG];
	va_list ap;
	int n;

	if (!e)
		return -1;
	e->cls = cls;
	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		tmp[0] = '\0', n = 0;
	fit(e, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
	return -1;
}

void err_prefix(struct err *e, const char *prefix)
{
	char tmp[ERR_LONG];
	int n;

	if (!e)
		return;
	n = snprintf(tmp, sizeof(tmp), "%s: %s", prefix, e->msg);
	if (n < 0)
		return;
	fit(e, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void err_clear(struct err *e)
{
	if (!e)
		return;
	e->cls = ERR_NONE;
	e->msg[0] = '\0';
}
