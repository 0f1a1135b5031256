/*
 * calibrate — least-squares efficiencies (see calibrate.h).
 *
 * The one idea: a layer's time is sum over classes of work_c / (rate_c x eff_c), which is
 * *linear* in x_c = 1 / eff_c. Fitting efficiencies is therefore an ordinary linear least
 * squares problem (forward and backward separately) with the bound x_c >= 1 (no class
 * beats its peak), solved by normal equations and an active set that pins any class that
 * wants to exceed its peak at exactly its peak and solves again. A weak ridge pulls each
 * x_c toward its current value, so classes that a profile cannot tell apart (they always
 * appear in the same proportion) keep what they had instead of trading off wildly.
 */
#include "config.h"
#include "calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "vec.h"

/* weight of the pull toward the current efficiencies, against relative squared errors */
#define RIDGE 1e-6

void calibrate_release(struct calib_set *s)
{
	free(s->pts);
	memset(s, 0, sizeof(*s));
}

static int push(struct calib_set *s, const struct calib_point *p)
{
	struct calib_point *n = realloc(s->pts, (size_t)(s->n + 1) * sizeof(*n));

	if (!n)
		return -1;
	s->pts = n;
	s->pts[s->n++] = *p;
	return 0;
}

static void add_units(struct calib_point *p, const struct work *w, const struct hardware *hw,
                      const struct cost_opts *o)
{
	double fu[HW_NPARAM], bu[HW_NPARAM];

	cost_units(w, hw, o, fu, bu);
	for (int c = 0; c < HW_NPARAM; c++) {
		p->fu[c] += fu[c];
		p->bu[c] += bu[c];
	}
}

int calibrate_add_profile(struct calib_set *s, const struct arch *a, const struct hardware *hw,
                          const struct cost_opts *o, const char *path, struct err *e)
{
	struct jv v = { path, e, NULL };
	struct cost_opts po = *o;
	cJSON *root = json_load_file(path, e);
	const cJSON *layers;
	char p[JPATH_MAX];
	bool model_form;
	int n, fold, first, r = -1, base = s->n;
	long i = 0;

	if (!root)
		return -1;
	model_form = cJSON_GetObjectItemCaseSensitive(root, "format") != NULL;
	if ((model_form && jv_format(&v, root, "octopipe.model/1") < 0) ||
	    jv_int(&v, root, "", "seq_len", JV_REQUIRED, 1, 1L << 24, 0, &po.seq) < 0 ||
	    jv_int(&v, root, "", "micro_batch_size", 0, 1, 1L << 20, 1, &po.micro_batch) < 0 ||
	    jv_array(&v, root, "", "layers", JV_REQUIRED, &layers) < 0)
		goto out;
	po.tp = 1;
	n = cJSON_GetArraySize(layers);
	if (n == a->nlayers) {
		fold = 0;
	} else if (n == a->nlayers - 2 && n >= 1) {
		fold = 1;
	} else {
		jv_fail(&v, "layers", "has %d entries but the architecture has %d layers (or %d with the "
		        "embedding and head folded into the first and last)", n, a->nlayers, a->nlayers - 2);
		goto out;
	}
	first = fold;
	for (const cJSON *l = layers->child; l; l = l->next, i++) {
		struct calib_point pt;
		double b, w;

		memset(&pt, 0, sizeof(pt));
		jpath_index(p, "layers", i);
		if (!cJSON_IsObject(l)) {
			jv_fail(&v, p, "must be an object, not %s", json_type_name(l));
			goto out;
		}
		if (jv_number(&v, l, p, "f_ms", JV_REQUIRED, 1e-9, 1e9, 0, &pt.f_ms) < 0)
			goto out;
		if (model_form) {
			if (jv_number(&v, l, p, "b_ms", JV_REQUIRED, 0, 1e9, 0, &b) < 0 ||
			    jv_number(&v, l, p, "w_ms", JV_REQUIRED, 0, 1e9, 0, &w) < 0)
				goto out;
			pt.bw_ms = b + w;
		} else if (jv_number(&v, l, p, "b_full_ms", JV_REQUIRED, 1e-9, 1e9, 0, &pt.bw_ms) < 0) {
			goto out;
		}
		if (fold && i == 0)
			add_units(&pt, &a->layers[0].w, hw, &po);
		add_units(&pt, &a->layers[first + i].w, hw, &po);
		if (fold && i == n - 1)
			add_units(&pt, &a->layers[a->nlayers - 1].w, hw, &po);
		pt.weight = 1.0 / n;
		pt.profile = s->nprofiles;
		snprintf(pt.kind, sizeof(pt.kind), "%s%s%s", fold && i == 0 ? "embedding+" : "",
		         a->layers[first + i].kind, fold && i == n - 1 ? "+head" : "");
		if (pt.bw_ms <= 0) {
			jpath_key(p, p, model_form ? "b_ms" : "b_full_ms");
			jv_fail(&v, p, "the backward must be > 0 to calibrate against");
			goto out;
		}
		if (push(s, &pt) < 0) {
			err_set(e, ERR_RUNTIME, "%s: out of host memory", path);
			goto out;
		}
	}
	/* every kind of layer of a profile counts the same (the error is judged per kind): a
	 * folded head layer weighs as much as the 25 layers of the common kind */
	for (int k = base; k < s->n; k++) {
		int same = 0, kinds = 0;

		for (int j = base; j < s->n; j++) {
			bool novel = true;

			same += strcmp(s->pts[j].kind, s->pts[k].kind) == 0;
			for (int q = base; q < j && novel; q++)
				novel = strcmp(s->pts[q].kind, s->pts[j].kind) != 0;
			kinds += novel;
		}
		s->pts[k].weight = 1.0 / ((double)kinds * same);
	}
	s->nprofiles++;
	r = 0;
out:
	if (r < 0)
		s->n = base;
	cJSON_Delete(root);
	return r;
}

int calibrate_param(const char *name)
{
	return strcmp(name, "launch") == 0 ? HW_LAUNCH : hardware_class(name);
}

/* Solves the k x k system A x = b in place (partial pivoting); -1 when singular. */
static int solve(double *A, double *b, int k)
{
	for (int c = 0; c < k; c++) {
		int piv = c;

		for (int r = c + 1; r < k; r++)
			if (fabs(A[r * k + c]) > fabs(A[piv * k + c]))
				piv = r;
		if (fabs(A[piv * k + c]) < 1e-300)
			return -1;
		if (piv != c) {
			for (int j = 0; j < k; j++) {
				double t = A[c * k + j];

				A[c * k + j] = A[piv * k + j];
				A[piv * k + j] = t;
			}
			double t = b[c];
			b[c] = b[piv];
			b[piv] = t;
		}
		for (int r = 0; r < k; r++) {
			double f;

			if (r == c)
				continue;
			f = A[r * k + c] / A[c * k + c];
			for (int j = c; j < k; j++)
				A[r * k + j] -= f * A[c * k + j];
			b[r] -= f * b[c];
		}
	}
	for (int c = 0; c < k; c++)
		b[c] /= A[c * k + c];
	return 0;
}

/* the lower bound of parameter c: an efficiency is at most 1, an overhead at least 0 */
static double lower(int c)
{
	return c == HW_LAUNCH ? 0 : 1;
}

/* Fits x (1/eff per class, then the launch overhead in us) for one pass; backward selects
 * the bu / bw_ms columns. */
static int fit_pass(const struct calib_set *s, bool backward, double x[HW_NPARAM])
{
	double total[HW_NPARAM] = { 0 }, x0[HW_NPARAM];
	bool free_[HW_NPARAM], pinned[HW_NPARAM] = { false };

	for (int i = 0; i < s->n; i++)
		for (int c = 0; c < HW_NPARAM; c++)
			total[c] += backward ? s->pts[i].bu[c] : s->pts[i].fu[c];
	for (int c = 0; c < HW_NPARAM; c++) {
		free_[c] = total[c] > 0 && !s->fixed[c];
		x0[c] = x[c];
	}
	for (int round = 0; round <= HW_NPARAM; round++) {
		double A[HW_NPARAM * HW_NPARAM] = { 0 }, b[HW_NPARAM] = { 0 };
		int idx[HW_NPARAM], k = 0, worst = -1;

		for (int c = 0; c < HW_NPARAM; c++)
			if (free_[c] && !pinned[c])
				idx[k++] = c;
		if (k == 0)
			break;
		for (int i = 0; i < s->n; i++) {
			const struct calib_point *p = &s->pts[i];
			const double *u = backward ? p->bu : p->fu;
			double y = backward ? p->bw_ms : p->f_ms, rest = 0;

			/* relative residual: divide the row by y; pinned and unfitted parameters are known */
			for (int c = 0; c < HW_NPARAM; c++)
				if (!free_[c] || pinned[c])
					rest += u[c] * x[c];
			for (int r = 0; r < k; r++) {
				for (int q = 0; q < k; q++)
					A[r * k + q] += p->weight * u[idx[r]] * u[idx[q]] / (y * y);
				b[r] += p->weight * u[idx[r]] * (y - rest) / (y * y);
			}
		}
		for (int r = 0; r < k; r++) {
			/* the pull toward the current value, relative to it (an overhead of 0: to 1 us) */
			double scale = x0[idx[r]] > 0 ? x0[idx[r]] : 1;

			A[r * k + r] += RIDGE / (scale * scale);
			b[r] += RIDGE * x0[idx[r]] / (scale * scale);
		}
		if (solve(A, b, k) < 0)
			return -1;
		for (int r = 0; r < k; r++)
			if (b[r] < lower(idx[r]) && (worst < 0 || b[r] - lower(idx[r]) < b[worst] - lower(idx[worst])))
				worst = r;
		if (worst < 0) {
			for (int r = 0; r < k; r++)
				x[idx[r]] = b[r];
			break;
		}
		pinned[idx[worst]] = true;
		x[idx[worst]] = lower(idx[worst]);
	}
	return 0;
}

/* hw's parameters of one pass as fit_pass sees them, and back */
static void params_get(const struct hardware *hw, bool backward, double x[HW_NPARAM])
{
	for (int c = 0; c < EFF_NCLASS; c++)
		x[c] = 1.0 / (backward ? hw->eff_b[c] : hw->eff_f[c]);
	x[HW_LAUNCH] = backward ? hw->launch_us_b : hw->launch_us_f;
}

static void params_set(struct hardware *hw, bool backward, const double x[HW_NPARAM])
{
	for (int c = 0; c < EFF_NCLASS; c++)
		(backward ? hw->eff_b : hw->eff_f)[c] = fmax(1e-6, fmin(1.0, 1.0 / x[c]));
	*(backward ? &hw->launch_us_b : &hw->launch_us_f) = fmax(0, x[HW_LAUNCH]);
}

int calibrate_fit(const struct calib_set *s, struct hardware *hw, struct err *e)
{
	if (s->n == 0)
		return err_set(e, ERR_INPUT, "calibration needs at least one measured layer");
	double xf[HW_NPARAM], xb[HW_NPARAM];

	params_get(hw, false, xf);
	params_get(hw, true, xb);
	if (fit_pass(s, false, xf) < 0 || fit_pass(s, true, xb) < 0)
		return err_set(e, ERR_INPUT, "the profiles do not determine the efficiencies "
		               "(two kernel classes always appear in the same proportion)");
	params_set(hw, false, xf);
	params_set(hw, true, xb);
	hw->eff_given = true;     /* measured: the fit wins over a runtime's published figures */
	return 0;
}

void calibrate_predict(const struct calib_set *s, const struct hardware *hw, int i, double *f_ms,
                       double *bw_ms)
{
	const struct calib_point *p = &s->pts[i];
	double xf[HW_NPARAM], xb[HW_NPARAM];

	params_get(hw, false, xf);
	params_get(hw, true, xb);
	*f_ms = *bw_ms = 0;
	for (int c = 0; c < HW_NPARAM; c++) {
		*f_ms += p->fu[c] * xf[c];
		*bw_ms += p->bu[c] * xb[c];
	}
}

int calibrate_error_kind(const struct calib_set *s, const struct hardware *hw, int k, const char *kind,
                         double *f_pct, double *bw_pct)
{
	double ef = 0, eb = 0;
	int n = 0;

	for (int i = 0; i < s->n; i++) {
		const struct calib_point *p = &s->pts[i];
		double f, bw;

		if ((k >= 0 && p->profile != k) || (kind && strcmp(p->kind, kind) != 0))
			continue;
		calibrate_predict(s, hw, i, &f, &bw);
		ef += fabs(f - p->f_ms) / p->f_ms;
		eb += fabs(bw - p->bw_ms) / p->bw_ms;
		n++;
	}
	*f_pct = n ? 100 * ef / n : 0;
	*bw_pct = n ? 100 * eb / n : 0;
	return n;
}

void calibrate_error(const struct calib_set *s, const struct hardware *hw, int k,
                     double *f_pct, double *bw_pct)
{
	calibrate_error_kind(s, hw, k, NULL, f_pct, bw_pct);
}

/* The bench of template i of layer w: a copy of the layer holding that one kernel (the
 * embedding's weight-gradient scatter goes with its gather), expanded for each pass. */
static int bench_of(const struct work *w, int i, const char *kind, const struct cost_opts *o,
                    struct calib_bench *b)
{
	struct work one = *w;
	struct kernel ks[2];
	int n;

	memset(b, 0, sizeof(*b));
	one.nk = 1;
	one.k[0] = w->k[i];
	if (strcmp(w->k[i].name, "embedding") != 0)
		one.w_bytes = 0;
	if (cost_kernels(&one, o, PASS_F, &b->f, 1) != 1)
		return 0;
	n = cost_kernels(&one, o, PASS_I, ks, 1);
	if (n == 1)
		b->bw[b->nbw++] = ks[0];
	n = cost_kernels(&one, o, PASS_W, ks, 1);
	if (n == 1)
		b->bw[b->nbw++] = ks[0];
	if (b->nbw == 0 || (b->f.flops <= 0 && b->f.bytes <= 0))
		return 0;
	snprintf(b->kind, sizeof(b->kind), "%.30s %s", kind, w->k[i].name);
	return 1;
}

int calibrate_benches(const struct work *works, const char *const *kinds, int nlayers, const struct cost_opts *o,
                      struct calib_bench **out, int *n, struct err *e)
{
	int total = 0, cap = 0;
	struct calib_bench *b = NULL;

	for (int l = 0; l < nlayers; l++) {
		bool seen = false;

		for (int j = 0; j < l && !seen; j++)
			seen = strcmp(kinds[j], kinds[l]) == 0;
		if (seen)
			continue;
		for (int i = 0; i < works[l].nk; i++) {
			if (VEC_RESERVE(b, cap, total + 1L) < 0) {
				free(b);
				return err_set(e, ERR_RUNTIME, "out of host memory");
			}
			total += bench_of(&works[l], i, kinds[l], o, &b[total]);
		}
	}
	*out = b;
	*n = total;
	return 0;
}

int calibrate_add_benches(struct calib_set *s, const struct calib_bench *b, int n, const struct hardware *hw,
                          struct err *e)
{
	int added = 0;

	for (int i = 0; i < n; i++) {
		struct calib_point p;

		if (!(b[i].f_ms > 0 && b[i].bw_ms > 0))
			continue;
		memset(&p, 0, sizeof(p));
		cost_kernel_units(&b[i].f, hw, p.fu);
		for (int k = 0; k < b[i].nbw; k++)
			cost_kernel_units(&b[i].bw[k], hw, p.bu);
		p.f_ms = b[i].f_ms;
		p.bw_ms = b[i].bw_ms;
		p.weight = 1;
		p.profile = s->nprofiles;
		snprintf(p.kind, sizeof(p.kind), "%s", b[i].kind);
		if (push(s, &p) < 0)
			return err_set(e, ERR_RUNTIME, "out of host memory");
		added++;
	}
	if (!added)
		return err_set(e, ERR_INPUT, "no microbenchmark has a measured time");
	s->nprofiles++;
	return 0;
}
