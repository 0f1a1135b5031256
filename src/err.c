/* err — error messages with a class (see err.h). */
#include "err.h"
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A message longer than the buffer keeps its start (the file) and its end (what is wrong)
 * and loses the middle of a long path: cutting the end lost the reason, so a 4000-byte
 * path's error said nothing. */
#define ERR_LONG (4 * 4096 + 1024)

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
	str_fit_middle(e->msg, sizeof(e->msg), tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
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
	str_fit_middle(e->msg, sizeof(e->msg), tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void err_clear(struct err *e)
{
	if (!e)
		return;
	e->cls = ERR_NONE;
	e->msg[0] = '\0';
}
