/*
 * messages — the status line's message and the message log (see app.h): every message
 * said goes into a ring of the last APP_LOG_MAX, so a message cut to the status line's
 * width, or replaced by the next one, can still be read in full (M).
 */
#include "config.h"
#include "app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include <time.h>

void app_msg(struct app *a, int role, const char *fmt, ...)
{
	char tmp[16384];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		tmp[0] = '\0', n = 0;
	str_fit_middle(a->msg, sizeof(a->msg), tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
	a->msg_role = role;
	if (!a->log && !(a->log = calloc(APP_LOG_MAX, sizeof(*a->log))))
		return;
	if (a->log_n > 0 && strcmp(app_log_entry(a, a->log_n - 1)->text, a->msg) == 0)
		return;
	{
		struct log_entry *le = &a->log[a->log_next];

		memcpy(le->text, a->msg, sizeof(le->text));
		le->role = role;
		le->when = time(NULL);
		a->log_next = (a->log_next + 1) % APP_LOG_MAX;
		if (a->log_n < APP_LOG_MAX)
			a->log_n++;
	}
}

const struct log_entry *app_log_entry(const struct app *a, int k)
{
	return &a->log[(a->log_next - a->log_n + k + APP_LOG_MAX) % APP_LOG_MAX];
}
