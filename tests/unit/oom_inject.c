/*
 * oom_inject — the allocation-failure injector behind test_oom (see its design note and
 * oom_inject.h): __wrap_malloc() and friends count each allocation, fail the armed ones
 * and keep the live ones in a pointer set. Only built where the linker has --wrap.
 */
#include "config.h"

#ifdef OCTO_HAVE_LD_WRAP

#include <execinfo.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oom_inject.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
void __wrap_free(void *p);

static pthread_mutex_t inj_lock = PTHREAD_MUTEX_INITIALIZER;
long inj_calls;      /* allocations counted since inj_arm() */
static long inj_fail_at;    /* the first allocation to fail (1-based), 0 = none */
static bool inj_persistent; /* and every one after it */
long inj_fired;      /* allocations failed since inj_arm() */
static int inj_paused;      /* > 0: allocate for the test itself (no counting, no failing) */
bool inj_trace;      /* $OOM_TRACE: print the stack of each first failed allocation */

/* The set of live allocations: open addressing over pointers (NULL empty, TOMB deleted). */
#define TOMB ((void *)1)
static void **live_slot;
static size_t live_cap, live_n, live_tombs;

static size_t live_hash(const void *p, size_t cap)
{
	return (size_t)(((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ULL >> 17) & (cap - 1);
}

static void live_put(void *p);

static void live_grow(void)
{
	void **old = live_slot;
	size_t oldcap = live_cap;

	live_cap = live_cap ? (live_n * 4 > live_cap ? live_cap * 2 : live_cap) : 1 << 12;
	live_slot = __real_calloc(live_cap, sizeof(*live_slot));
	if (!live_slot)
		abort();
	live_n = live_tombs = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i] && old[i] != TOMB)
			live_put(old[i]);
	__real_free(old);
}

static void live_put(void *p)
{
	size_t i;

	if ((live_n + live_tombs + 1) * 2 > live_cap)
		live_grow();
	for (i = live_hash(p, live_cap); live_slot[i] && live_slot[i] != TOMB; i = (i + 1) & (live_cap - 1))
		;
	if (live_slot[i] == TOMB)
		live_tombs--;
	live_slot[i] = p;
	live_n++;
}

/* Removes p; false when it was not allocated through the wrappers (libc's own, say). */
static bool live_take(void *p)
{
	if (!live_cap)
		return false;
	for (size_t i = live_hash(p, live_cap); live_slot[i]; i = (i + 1) & (live_cap - 1)) {
		if (live_slot[i] == p) {
			live_slot[i] = TOMB;
			live_tombs++;
			live_n--;
			return true;
		}
	}
	return false;
}

/* Whether this allocation attempt fails; counts it. Called with inj_lock held. While
 * paused, allocations are neither counted nor failed nor tracked (they belong to the test). */
static bool inj_should_fail(void)
{
	long k;

	if (inj_paused)
		return false;
	k = ++inj_calls;
	if (inj_fail_at && (k == inj_fail_at || (inj_persistent && k > inj_fail_at))) {
		if (inj_trace && k == inj_fail_at) {
			void *frames[32];

			fprintf(stderr, "allocation %ld fails:\n", k);
			backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
		}
		inj_fired++;
		return true;
	}
	return false;
}

static void *inj_alloc(void *(*fn)(void *, size_t, size_t), void *a, size_t b, size_t c)
{
	void *p = NULL;

	pthread_mutex_lock(&inj_lock);
	if (!inj_should_fail()) {
		p = fn(a, b, c);
		if (p && !inj_paused)
			live_put(p);
	}
	pthread_mutex_unlock(&inj_lock);
	return p;
}

static void *do_malloc(void *a, size_t n, size_t c) { (void)a; (void)c; return __real_malloc(n); }
static void *do_calloc(void *a, size_t k, size_t n) { (void)a; return __real_calloc(k, n); }
static void *do_strdup(void *s, size_t n, size_t c) { (void)n; (void)c; return __real_strdup(s); }
static void *do_strndup(void *s, size_t n, size_t c) { (void)c; return __real_strndup(s, n); }

void *__wrap_malloc(size_t n) { return inj_alloc(do_malloc, NULL, n, 0); }
void *__wrap_calloc(size_t k, size_t n) { return inj_alloc(do_calloc, NULL, k, n); }
char *__wrap_strdup(const char *s) { return inj_alloc(do_strdup, (void *)s, 0, 0); }
char *__wrap_strndup(const char *s, size_t n) { return inj_alloc(do_strndup, (void *)s, n, 0); }

void *__wrap_realloc(void *p, size_t n)
{
	void *q = NULL;

	pthread_mutex_lock(&inj_lock);
	if (!inj_should_fail()) {
		q = __real_realloc(p, n);
		if (q || n == 0) {
			if (p)
				live_take(p);
			if (q && !inj_paused)
				live_put(q);
		}
	}
	pthread_mutex_unlock(&inj_lock);
	return q;
}

void __wrap_free(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&inj_lock);
	live_take(p);
	pthread_mutex_unlock(&inj_lock);
	__real_free(p);
}

/* PCRE2 allocates through its own general context: its constructors the engine uses
 * (a compiled pattern, match data, a captured substring) count as allocations too. */
#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>
pcre2_code *__real_pcre2_compile_8(PCRE2_SPTR, PCRE2_SIZE, uint32_t, int *, PCRE2_SIZE *,
                                   pcre2_compile_context *);
pcre2_code *__wrap_pcre2_compile_8(PCRE2_SPTR, PCRE2_SIZE, uint32_t, int *, PCRE2_SIZE *,
                                   pcre2_compile_context *);
pcre2_match_data *__real_pcre2_match_data_create_from_pattern_8(const pcre2_code *, pcre2_general_context *);
pcre2_match_data *__wrap_pcre2_match_data_create_from_pattern_8(const pcre2_code *, pcre2_general_context *);
void __real_pcre2_code_free_8(pcre2_code *);
void __wrap_pcre2_code_free_8(pcre2_code *);
void __real_pcre2_match_data_free_8(pcre2_match_data *);
void __wrap_pcre2_match_data_free_8(pcre2_match_data *);
int __real_pcre2_substring_get_byname_8(pcre2_match_data *, PCRE2_SPTR, PCRE2_UCHAR **, PCRE2_SIZE *);
int __wrap_pcre2_substring_get_byname_8(pcre2_match_data *, PCRE2_SPTR, PCRE2_UCHAR **, PCRE2_SIZE *);
void __real_pcre2_substring_free_8(PCRE2_UCHAR *);
void __wrap_pcre2_substring_free_8(PCRE2_UCHAR *);

pcre2_code *__wrap_pcre2_compile_8(PCRE2_SPTR pat, PCRE2_SIZE len, uint32_t opts, int *code,
                                   PCRE2_SIZE *off, pcre2_compile_context *cc)
{
	pcre2_code *re = NULL;
	bool fail;

	pthread_mutex_lock(&inj_lock);
	fail = inj_should_fail();
	pthread_mutex_unlock(&inj_lock);
	if (fail) {
		*code = PCRE2_ERROR_NOMEMORY;
		*off = 0;
		return NULL;
	}
	re = __real_pcre2_compile_8(pat, len, opts, code, off, cc);
	if (re) {
		pthread_mutex_lock(&inj_lock);
		live_put(re);
		pthread_mutex_unlock(&inj_lock);
	}
	return re;
}

pcre2_match_data *__wrap_pcre2_match_data_create_from_pattern_8(const pcre2_code *re,
                                                                pcre2_general_context *gc)
{
	pcre2_match_data *md = NULL;

	pthread_mutex_lock(&inj_lock);
	if (!inj_should_fail()) {
		md = __real_pcre2_match_data_create_from_pattern_8(re, gc);
		if (md)
			live_put(md);
	}
	pthread_mutex_unlock(&inj_lock);
	return md;
}

void __wrap_pcre2_code_free_8(pcre2_code *re)
{
	if (!re)
		return;
	pthread_mutex_lock(&inj_lock);
	live_take(re);
	pthread_mutex_unlock(&inj_lock);
	__real_pcre2_code_free_8(re);
}

void __wrap_pcre2_match_data_free_8(pcre2_match_data *md)
{
	if (!md)
		return;
	pthread_mutex_lock(&inj_lock);
	live_take(md);
	pthread_mutex_unlock(&inj_lock);
	__real_pcre2_match_data_free_8(md);
}

int __wrap_pcre2_substring_get_byname_8(pcre2_match_data *md, PCRE2_SPTR name, PCRE2_UCHAR **out,
                                        PCRE2_SIZE *len)
{
	int r = PCRE2_ERROR_NOMEMORY;

	pthread_mutex_lock(&inj_lock);
	if (!inj_should_fail()) {
		r = __real_pcre2_substring_get_byname_8(md, name, out, len);
		if (r == 0 && !inj_paused)
			live_put(*out);
	}
	pthread_mutex_unlock(&inj_lock);
	return r;
}

void __wrap_pcre2_substring_free_8(PCRE2_UCHAR *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&inj_lock);
	live_take(s);
	pthread_mutex_unlock(&inj_lock);
	__real_pcre2_substring_free_8(s);
}

void inj_arm(long fail_at, bool persistent)
{
	pthread_mutex_lock(&inj_lock);
	inj_calls = 0;
	inj_fired = 0;
	inj_fail_at = fail_at;
	inj_persistent = persistent;
	pthread_mutex_unlock(&inj_lock);
}

void inj_pause(void)
{
	pthread_mutex_lock(&inj_lock);
	inj_paused++;
	pthread_mutex_unlock(&inj_lock);
}

void inj_resume(void)
{
	pthread_mutex_lock(&inj_lock);
	inj_paused--;
	pthread_mutex_unlock(&inj_lock);
}

long live_count(void)
{
	long n;

	pthread_mutex_lock(&inj_lock);
	n = (long)live_n;
	pthread_mutex_unlock(&inj_lock);
	return n;
}

#endif
