/*
 * calibrate — fits the per-class efficiencies of a hardware section to measured layer
 * times: F and the full backward (B + W) of every profiled layer, for one or several
 * models at once.
 *
 * A measured profile is either the format of samples/profiles (`layers[i].f_ms` and
 * `b_full_ms`, with `seq_len`) or a layer table (`octopipe.model/1`, B + W). It may have
 * one entry per architecture layer, or two fewer: then the embedding is folded into the
 * first entry and the head into the last, as in the bundled H200 profiles.
 */
#ifndef OCTO_CALIBRATE_H
#define OCTO_CALIBRATE_H

#include <stdbool.h>

#include "arch.h"
#include "hardware.h"

/* One measured layer: its work units per fitted parameter (cost_units), and what was
 * measured. */
struct calib_point {
	double fu[HW_NPARAM], bu[HW_NPARAM];
	double f_ms, bw_ms;
	double weight;          /* every profile, and every kind within it, counts the same */
	int profile;            /* which profile it came from */
	char kind[48];          /* the layer's kind ("embedding+" / "+head" when folded in) */
};

struct calib_set {
	struct calib_point *pts;
	int n;
	int nprofiles;
	bool fixed[HW_NPARAM];  /* parameters calibrate_fit holds at hw's values */
};

/* The parameter named name ("launch" or a kernel class), -1 when unknown. */
int calibrate_param(const char *name);

/* Reads the profile at path and appends its points for architecture a (work units for
 * hardware hw and options o; the profile's seq_len and micro_batch_size win). */
int calibrate_add_profile(struct calib_set *s, const struct arch *a, const struct hardware *hw,
                          const struct cost_opts *o, const char *path, struct err *e);
void calibrate_release(struct calib_set *s);

/* Least-squares fit of 1/eff per class and of the launch overhead, forward and backward
 * separately (relative errors, each profile weighted equally; efficiencies capped at 1,
 * overheads >= 0). Parameters with no measured work, and those s->fixed names, keep hw's
 * values. */
int calibrate_fit(const struct calib_set *s, struct hardware *hw, struct err *e);

/* Mean absolute percentage error of profile k (all profiles when k < 0) under hw. */
void calibrate_error(const struct calib_set *s, const struct hardware *hw, int k,
                     double *f_pct, double *bw_pct);

/* The same over the points of profile k whose kind is kind; returns how many there are. */
int calibrate_error_kind(const struct calib_set *s, const struct hardware *hw, int k, const char *kind,
                         double *f_pct, double *bw_pct);

/* Predicted F and full backward of point i under hw, in ms. */
void calibrate_predict(const struct calib_set *s, const struct hardware *hw, int i, double *f_ms,
                       double *bw_ms);

/*
 * Microbenchmarks (octopipe calibrate --gpu): every kernel of a layer's list run alone on a
 * GPU, its forward and its backward (the input grad, then the weight grad), timed. Each
 * is one point of a calib_set whose work sits in a single class, so the fit recovers each
 * class's efficiency from its own kernels (and the launch overhead from all of them).
 */
struct calib_bench {
	char kind[48];          /* "LAYER-KIND KERNEL", e.g. "attn+mlp qkv" */
	struct kernel f;        /* the forward */
	struct kernel bw[2];    /* the backward: I, then W (bw[1] empty when there is none) */
	int nbw;
	double f_ms, bw_ms;     /* measured: F, and I + W */
};

/* The benches of a model's architecture (works: one per layer, kinds its layers' kinds):
 * every kernel of the first layer of each kind, at o's sequence, micro-batch and TP
 * degree, kernels with no work left out. *out is a heap array of *n (caller frees). */
int calibrate_benches(const struct work *works, const char *const *kinds, int nlayers, const struct cost_opts *o,
                      struct calib_bench **out, int *n, struct err *e);

/* Appends measured benches (f_ms and bw_ms > 0) to s as profile s->nprofiles, their units
 * for hw's peak and bandwidth; benches with no time are skipped. -1 when out of memory or
 * none has a time. */
int calibrate_add_benches(struct calib_set *s, const struct calib_bench *b, int n, const struct hardware *hw,
                          struct err *e);

#endif
