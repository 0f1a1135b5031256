/*
 * tap.h — a tiny assertion header for unit tests that speak TAP (Test Anything Protocol),
 * so automake's tap-driver counts every assertion. Each check prints "ok N - what" or
 * "not ok N - what" with the source line; tap_done() prints the plan and the exit code.
 */
#ifndef OCTO_TAP_H
#define OCTO_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

__attribute__((format(printf, 4, 5)))
static int tap_ok(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", cond ? "ok" : "not ok", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		printf("#   failed at %s:%d\n", file, line);
		tap_failed++;
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (!ok(g_ == w_, __VA_ARGS__)) \
		printf("#   got %lld, want %lld\n", g_, w_); \
} while (0)

#define is_dbl(got, want, eps, ...) do { \
	double g_ = (got), w_ = (want); \
	if (!ok(fabs(g_ - w_) <= (eps), __VA_ARGS__)) \
		printf("#   got %.17g, want %.17g\n", g_, w_); \
} while (0)

#define is_str(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__)) \
		printf("#   got  '%s'\n#   want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}


/* Path of a file under tests/data (uses $top_srcdir from the test environment). */
#include <stdlib.h>
static inline const char *tap_data(const char *name)
{
	static char buf[4][4096];
	static int k;
	const char *top = getenv("top_srcdir");

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/tests/data/%s", top ? top : ".", name);
	return buf[k];
}

#endif
