/* err — error messages with a class (see err.h). */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_set(struct err *e, enum err_class cls, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	e->cls = cls;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -1;
}

void err_prefix(struct err *e, const char *prefix)
{
	char tmp[2 * sizeof(e->msg)];

	if (!e)
		return;
	snprintf(tmp, sizeof(tmp), "%s: %s", prefix, e->msg);
	snprintf(e->msg, sizeof(e->msg), "%.*s", (int)sizeof(e->msg) - 1, tmp);
}

void err_clear(struct err *e)
{
	if (!e)
		return;
	e->cls = ERR_NONE;
	e->msg[0] = '\0';
}
