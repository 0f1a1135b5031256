/*
 * tune_impl — what the tuner's modules share and nothing else includes: the tuner itself,
 * its candidate lists, and the helpers each phase uses to propose moves.
 *
 * tune.c is the driver (states, evaluation, the budget, the iterated local search, the
 * step record); each phase proposes its moves in its own file: tune_partition.c (with
 * the exact partitioner), tune_place.c and tune_sched.c. A phase only appends candidates
 * to the tuner's list (tune_cand_add, then tune_cand_keep); the driver simulates them.
 */
#ifndef OCTO_TUNE_IMPL_H
#define OCTO_TUNE_IMPL_H

#include <stdbool.h>

#include "metrics.h"
#include "sim.h"
#include "tune.h"
#include "tune_partition.h"

#define IMPROVE_EPS 1e-9   /* relative: a move must beat the current time by this much */
/* simulations the time budget keeps in reserve: one more candidate and the result's two */
#define BUDGET_RESERVE_EVALS 3
#define MAX_RANKED 8       /* candidates simulated per ranked move family */
#define CHAIN_CANDS 24     /* chain moves of layers simulated per step */
#define SHIFT_CANDS 24     /* single boundary shifts simulated per step */
#define OCTO_TUNE_MAX_AWARE 4096 /* devices up to which the partition is also bubble-aware */
#define ORDER_CANDS 32     /* gap-targeted order moves simulated per step */
#define ORDER_WINDOW 24    /* how far down its device's list an op may come from */
#define ORDER_MAX_OPS 40000 /* larger plans keep the policy's order */
#define ORDER_NEAR 0.01    /* order moves for states at most this much slower than the best */
#define PART_MEMO 64       /* partitions remembered by placement and weights */
#define WAIT_START_MARGIN 0.005 /* a start balanced counting the waits must be this much faster */
#define OPEN_V_LEAD_MARGIN 0.02 /* an open V starts the search when this much faster than the rest */

struct cand {
	struct tune_state st;
	enum tune_move_kind kind;
	int a, b;
	char what[200];
	double score;          /* estimator: lower first */
};

/* What one simulation of a state needs to itself: a plan sized for the largest candidate
 * (model and cluster copied once), the simulator's workspace and the policy's per-stage
 * caps. The tuner has one; each worker thread of its pool (tune_pool.c) has its own. */
struct tune_evalbuf {
	struct plan work;
	struct sim sim;
	int *cap, *wcap;
};

/* What one simulation reports besides its iteration time. */
struct tune_evalres {
	double ms;             /* INFINITY when it cannot run, deadlocks or does not fit */
	double tie;            /* better()'s tie-break: the devices' end times summed */
	double oom_peak;       /* > 0: out of memory, its largest device peak (bytes) */
	bool counted;          /* simulated (a target's rules can refuse a plan before) */
	bool host_oom;         /* the host ran out of memory */
};

struct tune_pool;

struct part_memo {
	int nstages;
	int *device, *first;   /* NULL: an empty slot */
	double *weight;
	bool ok;
	bool quick;            /* from tune_partition_quick (serves only its requests) */
	bool wait;             /* counting the wait for the first backward */
	int pending;           /* >= 0: its answer is that item's of the list being balanced
	                        * (tune_partition_cands) */
};

struct tuner {
	const struct model *model;
	const struct cluster *cluster;
	struct tune_opts opts;
	struct tune_evalbuf eb;  /* the driver's own evaluations (the phases read its times) */
	struct tune_pool *pool;  /* worker threads for the candidate lists (NULL: none yet) */
	int threads;             /* the candidate lists' threads, the caller's included */
	int max_stages;
	double *layer_cost, *layer_fb;
	double *load;            /* per device, scratch for tune_estimate() and the state bound */
	double *dev_bytes;       /* per device, scratch for the static memory check */
	bool *seen;              /* per device, scratch for the state bound */
	long pruned;             /* candidates the state bound ruled out without a simulation */
	double *layer_bytes;     /* static bytes per layer */
	double *layer_f;         /* forward time per layer */
	double *layer_i;         /* input-gradient time per layer */
	double *weight, *mem;    /* per device: the partitioner's weights and usable memory */
	struct tune_part_in part;
	struct part_memo memo[PART_MEMO];
	int memo_next;
	/* baselines */
	struct plan best_baseline;
	bool have_baseline;
	double baseline_ms;
	struct err refused;         /* why accept refused the first baseline it refused */
	double min_peak;            /* of the plans simulated out of memory, the smallest
	                             * largest-device peak (bytes): what the closest needs */
	char baseline_name[64];
	/* search */
	struct tune_state cur;
	double cur_ms;
	double cur_tie;          /* the current state's tie-break (see better()) */
	double eval_tie;         /* the last evaluation's */
	struct metrics cur_metrics;
	struct tune_state best;
	double best_ms;
	enum tune_phase phase;
	int round, rounds_done;
	bool round_improved, done, started;
	struct cand *cands;
	int ncands, ccap, ci;
	int tabu_boundary, tabu_dir;
	struct tune_step *steps;
	int nsteps, scap;
	long evals;
	double t0, spent;
	double search_t0;        /* when the search proper began (after the baselines and */
	long search_evals0;      /* starts), and the evaluations by then: the budget's pace */
	double gen_s;            /* the last generation of candidates took (seconds): a deep
	                          * model's partition moves take a while to generate */
	double bound_ms;         /* sim_lower_bound_tight(): what the progress line reports */
	double stop_ms;          /* sim_lower_bound_memory() (>= bound_ms): no plan that fits is
	                          * faster, so the search stops on reaching it */
	double last_progress;
	bool interrupted;
	bool mem_binds;          /* memory binds a full pipeline: the starts and scheduling moves
	                          * also keep room on a device for its later stages (reserve) */
	bool rc_moves;           /* scheduling may make early stages recompute (opts, memory binds) */
	int kicks;               /* perturbations since the best last improved */
	unsigned long long rng;
	int *pos;                /* per op: its place in the order (gap-targeted moves) */
	struct tune_state starts[8];  /* other starting structures, best first */
	double start_ms[8];
	const char *start_shape[8];   /* each one's placement in words */
	int nstarts, next_start;
	/* an allocation failed where the search cannot report it (a candidate list, an
	 * evaluation): the next tune_new/tune_step/tune_result says out of host memory */
	bool oom;
};

/* ---- the driver (tune.c) --------------------------------------------------------------- */

/* The quarters of its 1F1B depth a stage may hold in flight (tune_sched.depth_q: 0 = 4). */
static inline int tune_depth_quarters(const struct tune_sched *k)
{
	return k->depth_q > 0 && k->depth_q < 4 ? k->depth_q : 4;
}

/* Simulates a state; its iteration time (INFINITY when it does not fit or deadlocks). The
 * simulator's per-op times then are the state's until the next evaluation. */
double tune_eval(struct tuner *t, const struct tune_state *s, struct metrics *keep);
/* The simulation itself, in b: reads t but changes nothing of it (worker threads call it
 * at once, each with its own b). */
void tune_eval_in(const struct tuner *t, struct tune_evalbuf *b, const struct tune_state *s, struct metrics *keep,
                  struct tune_evalres *r);
/* Sizes b for t's largest candidate; -1 with e when out of host memory. */
int tune_evalbuf_init(struct tune_evalbuf *b, const struct tuner *t, struct err *e);
void tune_evalbuf_release(struct tune_evalbuf *b);
/* Counts r (one simulation's report) into the tuner: evaluations, progress, the closest
 * plan out of memory, host memory. */
void tune_eval_count(struct tuner *t, const struct tune_evalres *r);

/* ---- the pool (tune_pool.c) --------------------------------------------------------------- */

/* Simulates the candidates idx[0..n) of t's list, on t->threads threads (the caller's
 * included), each until the deadline (clock_now_s(); 0: none) or the stop flag; res[i]
 * says what became of idx[i] (counted false: not simulated). Falls back to the caller
 * alone when the system starts no threads; sets t->oom when the host has no memory for
 * them. Counts nothing else into t. */
void tune_pool_run(struct tuner *t, const int *idx, int n, double deadline, struct tune_evalres *res);
/* Calls fn(arg, i, b) once for every i in [0, n), on t->threads threads (the caller's
 * included), b the calling thread's own evaluation buffer; returns when all are done.
 * fn must only read what the other calls write. False (t->oom set, nothing called) when
 * the host has no memory for the threads. */
bool tune_pool_for(struct tuner *t, int n, void (*fn)(void *arg, int i, struct tune_evalbuf *b), void *arg);
void tune_pool_free(struct tune_pool *pool);

/* Counts a plan simulated out of memory into t->min_peak (its largest device peak). */
void tune_note_oom(struct tuner *t, const struct metrics *m);
/* The cheap estimate the move families are ranked by (lower first). */
double tune_estimate(const struct tuner *t, const struct tune_state *s);
unsigned long long tune_rand(struct tuner *t);
/* A lower bound on the iteration time of every order of s's partition and placement: the
 * largest over devices of the first microbatch's forward up to the device's first stage
 * plus all the device's work. Candidates above the current time are not simulated. */
double tune_state_bound(const struct tuner *t, const struct tune_state *s);

/* Whether the weights, gradients and optimizer states of s's stages alone fit every device. */
bool tune_static_fits(const struct tuner *t, const struct tune_state *s);
/* Boundaries splitting L layers as evenly as s's stage count allows. */
void tune_uniform_first(struct tune_state *s, int L);
/* Appends an accepted step (NULL when out of host memory: t->oom is set). */
struct tune_step *tune_record(struct tuner *t, enum tune_phase ph, enum tune_move_kind kind, int a, int b,
                              const char *what, double before, double after);

/* ---- states (tune_state.c) ------------------------------------------------------------- */

int tune_state_alloc(struct tune_state *s, int nstages);
void tune_state_drop_order(struct tune_state *s);
long tune_state_order_len(const struct tune_state *s);
/* Gives s the per-device order (CSR over devices lists); -1 when out of host memory. */
int tune_state_set_order(struct tune_state *s, int devices, const int *start, const struct action *order);

/* Appends a copy of from as a candidate (NULL when out of host memory: t->oom is set). */
struct cand *tune_cand_add(struct tuner *t, const struct tune_state *from, enum tune_move_kind kind, int a, int b);
/* Drops the last candidate when it is the current state or its static memory cannot fit. */
void tune_cand_keep(struct tuner *t);
/* Keeps candidates before from, sorts the rest by score (seeded ties) and keeps keep. */
void tune_rank(struct tuner *t, int from, int keep);

/* ---- the phases -------------------------------------------------------------------------- */

/* tune_partition.c: balanced boundaries for s's stages and placement (idle: per device
 * the time it idles anyway, or NULL); false when nothing fits (s unchanged). */
bool tune_partition_state(struct tuner *t, struct tune_state *s, const double *idle, double span);
/* The balance with each device's wait for its first backward counted too
 * (tune_partition_wait): another candidate beside tune_partition_state's. */
bool tune_partition_waits(struct tuner *t, struct tune_state *s);
/* The same balance by a shorter search (the exact stage-level program for the splits it
 * tries, no kicks, a small branch and bound): for ranking many placements at once. */
bool tune_partition_quick(struct tuner *t, struct tune_state *s);
void tune_gen_partition(struct tuner *t);
/* tune_partmemo.c: balances every candidate from t->cands[from] on as tune_partition_quick
 * (quick) or tune_partition_state (no idle) does, one after the other as far as the memo
 * is concerned, the searches on the pool's threads. Returns what each returned (element
 * i - from; the caller frees it), NULL (t->oom set) when out of host memory. */
bool *tune_partition_cands(struct tuner *t, int from, bool quick);
/* One candidate's request: as tune_partition_quick (quick), tune_partition_waits (wait) or
 * tune_partition_state(idle, span) would balance it. */
struct part_req {
	const double *idle;
	double span;
	bool quick, wait;
};
/* tune_partition_cands with a request a candidate (req[i - from]). Both drop the list's
 * candidates when they return NULL. */
bool *tune_partition_reqs(struct tuner *t, int from, const struct part_req *req);
/* tune.c: tune_cand_keep for every candidate from t->cands[from] on, in order, and drops
 * those whose keep[i - from] is false; the order of the rest is kept. */
void tune_cands_keep(struct tuner *t, int from, const bool *keep);
/* Drops every candidate from t->cands[from] on (a list not yet balanced when out of host
 * memory: their boundaries are not a plan's). */
void tune_cands_drop(struct tuner *t, int from);
/* tune_place.c */
void tune_place_round_robin(struct tune_state *s, int devices);
/* The V continued: down the devices, back up, down again. */
void tune_place_zigzag(struct tune_state *s, int devices);
/* The open V (D < S < 2D): ends paired as in a V, the middle one stage a device. */
bool tune_place_open_v(struct tune_state *s, int devices, bool ends_alone);
int tune_stages_on(const struct tune_state *s, int d);
void tune_gen_placement(struct tuner *t);
/* tune_sched.c */
void tune_gen_scheduling(struct tuner *t);

#endif
