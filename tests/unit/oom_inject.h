/*
 * oom_inject.h — the allocation-failure injector of test_oom (oom_inject.c): with the
 * binary linked -Wl,--wrap=malloc,calloc,realloc,strdup,strndup,free and PCRE2's
 * constructors, every allocation is counted, can be made to fail, and is tracked while
 * live so that a leak shows.
 */
#ifndef OCTO_OOM_INJECT_H
#define OCTO_OOM_INJECT_H

#include <stdbool.h>

extern long inj_calls;  /* allocations counted since inj_arm() */
extern long inj_fired;  /* allocations failed since inj_arm() */
extern bool inj_trace;  /* print the stack of each first failed allocation */

/* From now on the fail_at-th allocation fails (1-based; 0: none), and with persistent
 * every one after it; resets the counts. */
void inj_arm(long fail_at, bool persistent);
/* Between inj_pause() and inj_resume() (nested), allocations belong to the test itself:
 * neither counted nor failed nor tracked. */
void inj_pause(void);
void inj_resume(void);
/* The allocations made through the wrappers and not yet freed. */
long live_count(void);

#endif
