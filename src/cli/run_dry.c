/*
 * run_dry — `octopipe run --backend cuda --dry-run PLAN [--json]`: the kernels the cuda
 * backend would launch for every op of a plan, with their shapes, FLOPs and bytes, from
 * the kernel plan (kplan.h) alone: no GPU, no CUDA library, so it runs everywhere and the
 * kernel plan is tested everywhere. An op is the same for every microbatch: one entry per
 * stage and op kind, with how many times it runs.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli/run_backend.h"
#include "exec/kplan.h"
#include "json.h"
#include "vec.h"

/* The op letters of a plan's three slots. */
static char slot_letter(const struct plan *p, int k)
{
	return k == 0 ? 'F' : k == 2 ? 'W' : p->split_backward ? 'I' : 'B';
}

static double r6(double x)
{
	return round(x * 1e6) / 1e6;
}

struct dry {
	const struct plan *p;
	struct work *works;        /* the layers' architecture, or NULL: fitted proxies */
	enum kplan_mode mode;
	const char *why;           /* why a model's ops run fitted proxies without --fit, or NULL */
	struct cost_opts o;
	double gemm_tflops;
	struct kernel *ks;
	int max;
	const char *not_run;       /* what the plan prices that the kernels do not run, or NULL */
	double *full_ms;           /* then: per stage x 3 slots, the plan's own op times (with the
	                            * collectives); the plan itself is priced without them */
};

/* The op time of stage s's slot k, as run (full: as the plan prices it, collectives and all). */
static double op_ms(const struct dry *d, int s, int k, bool full)
{
	double ms[3];

	if (full && d->full_ms)
		return d->full_ms[s * 3 + k];
	plan_stage_ms(d->p, s, ms);
	return ms[k] / d->p->cluster.device_speed[d->p->stages[s].device];
}

/* The kernels of stage s's slot k into d->ks, growing it; how many, or -1 out of memory. */
static int op_kernels(struct dry *d, int s, int k)
{
	int n = kplan_kernels(d->p, d->works, &d->o, d->gemm_tflops, s, k, d->ks, d->max);

	if (n > d->max) {
		if (VEC_RESERVE(d->ks, d->max, n) < 0)
			return -1;
		n = kplan_kernels(d->p, d->works, &d->o, d->gemm_tflops, s, k, d->ks, d->max);
	}
	return n;
}

/* The pass of stage slot k's kernels, as far as their launches go: a fused B's W kernels
 * launch as in I (only attention cores depend on the pass, and W has none). */
static enum kernel_pass slot_pass(int k)
{
	return k == 0 ? PASS_F : k == 2 ? PASS_W : PASS_I;
}

static int print_json(const char *path, struct dry *d)
{
	const struct plan *p = d->p;
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *ops;

	if (!root)
		w.oom = true;
	jw_str(&w, root, "plan", path);
	jw_str(&w, root, "backend", "cuda");
	jw_str(&w, root, "kernels", kplan_mode_name(d->mode));
	if (d->why)
		jw_str(&w, root, "kernels_note", d->why);
	if (d->not_run)
		jw_str(&w, root, "not_run", d->not_run);
	jw_num(&w, root, "microbatches", p->microbatches);
	ops = jw_arr(&w, root, "ops");
	for (int s = 0; s < p->nstages && !w.oom; s++)
		for (int k = 0; k < (p->split_backward ? 3 : 2); k++) {
			int n = op_kernels(d, s, k);
			cJSON *o = jw_push(&w, ops, cJSON_CreateObject()), *ks;
			char op[2] = { slot_letter(p, k), 0 };

			if (n < 0) {
				w.oom = true;
				break;
			}
			jw_num(&w, o, "stage", s);
			jw_num(&w, o, "device", p->stages[s].device);
			jw_str(&w, o, "op", op);
			jw_num(&w, o, "count", p->microbatches);
			jw_num(&w, o, "predicted_ms", r6(op_ms(d, s, k, false)));
			if (d->full_ms)
				jw_num(&w, o, "predicted_with_collectives_ms", r6(op_ms(d, s, k, true)));
			if (!d->works)
				jw_num(&w, o, "sized_for_tflops", r6(kplan_tflops(p, k, d->gemm_tflops)));
			{
				long issued = 0, charged = 0;

				for (int i = 0; i < n; i++) {
					issued += kplan_launches(&d->ks[i], slot_pass(k));
					charged += d->ks[i].launches;
				}
				jw_num(&w, o, "launches", (double)issued);
				jw_num(&w, o, "charged_launches", (double)charged);
			}
			ks = jw_arr(&w, o, "kernels");
			for (int i = 0; i < n; i++) {
				const struct kernel *x = &d->ks[i];
				cJSON *kn = jw_push(&w, ks, cJSON_CreateObject());

				jw_str(&w, kn, "name", x->name);
				jw_str(&w, kn, "class", hardware_class_names[x->cls]);
				if (x->m > 0) {
					jw_num(&w, kn, "m", x->m);
					jw_num(&w, kn, "n", x->n);
					jw_num(&w, kn, "k", x->k);
					jw_num(&w, kn, "groups", x->groups);
				}
				if (x->heads > 0) {   /* an attention core: its blocks' GEMMs (kplan.h) */
					struct kplan_tile t[KPLAN_CORE_TILES];

					jw_num(&w, kn, "heads", x->heads);
					jw_num(&w, kn, "d_qk", x->d_qk);
					jw_num(&w, kn, "d_v", x->d_v);
					jw_num(&w, kn, "seq", (double)x->seq);
					jw_num(&w, kn, "sequences", x->seqs);
					jw_num(&w, kn, "window", (double)x->window);
					jw_num(&w, kn, "query_blocks", kplan_core_tiles(x, t));
					jw_num(&w, kn, "block_gemm_flops", kplan_core_gemm_flops(x) * (k == 0 ? 1 : 2));
				}
				jw_num(&w, kn, "flops", x->flops);
				if (x->state_bytes > 0)
					jw_num(&w, kn, "state_bytes", x->state_bytes);
				jw_num(&w, kn, "bytes", x->bytes);
				jw_num(&w, kn, "launches", (double)kplan_launches(x, slot_pass(k)));
				jw_num(&w, kn, "charged_launches", x->launches);
			}
		}
	return cli_put_json(root, w.oom);
}

static int print_text(const char *path, struct dry *d)
{
	const struct plan *p = d->p;

	printf("plan %s: the kernels of the cuda backend, without a GPU\n", cli_name(path));
	if (d->works) {
		printf("kernels: architecture (the cost model's kernel list of each layer, measured as it runs)\n");
		if (d->full_ms)
			printf("not run: %s;\nPREDICTED is each op without these collectives (what a run is compared with), +COLL ms "
			       "what they add to it in the plan\n", d->not_run);
		printf("\n");
	}
	else
		printf("kernels: fitted (%s)\nproxies sized for the predicted time at the throughput of the cluster's GEMMs;\n"
		       "on a GPU each is timed and refitted to its op's predicted time\n\n",
		       d->why ? d->why : "as --fit asks");
	printf("%5s %6s %2s %6s %12s", "STAGE", "DEVICE", "OP", "COUNT", "PREDICTED ms");
	if (d->full_ms)
		printf(" %12s", "+COLL ms");
	printf("  %-16s %-12s %8s %8s %8s %6s %12s %12s\n", "KERNEL", "CLASS", "M", "N", "K", "GROUPS", "GFLOP", "MB");
	for (int s = 0; s < p->nstages; s++)
		for (int k = 0; k < (p->split_backward ? 3 : 2); k++) {
			int n = op_kernels(d, s, k);

			if (n < 0) {
				cli_err("octopipe run: out of host memory\n");
				return EXIT_RUNTIME;
			}
			printf("%5d %6d %2c %6d %12.3f", s, p->stages[s].device, slot_letter(p, k), p->microbatches,
			       op_ms(d, s, k, false));
			if (d->full_ms)
				printf(" %12.3f", op_ms(d, s, k, true) - op_ms(d, s, k, false));
			if (!n)
				printf("  (none)\n");
			for (int i = 0; i < n; i++) {
				const struct kernel *x = &d->ks[i];

				if (i)
					printf("%5s %6s %2s %6s %12s%s", "", "", "", "", "", d->full_ms ? "             " : "");
				printf("  %-16.16s %-12.12s ", x->name, hardware_class_names[x->cls]);
				if (x->m > 0)
					printf("%8.0f %8.0f %8.0f %6d", x->m, x->n, x->k, x->groups);
				else if (x->heads > 0)   /* a core: queries, keys' head dims, heads */
					printf("%8ld %8d %8d %6d", x->seq, x->d_v, x->d_qk, x->heads);
				else
					printf("%8s %8s %8s %6s", "", "", "", "");
				printf(" %12.3f %12.3f\n", x->flops / 1e9, x->bytes / 1e6);
			}
		}
	return EXIT_OK;
}

/* The plan's own op times into d->full_ms, then p priced without the collectives its
 * kernels leave out (as octopipe run compares a run with it); an exit status. */
static int price_as_run(struct dry *d, struct plan *p, struct err *e)
{
	bool changed = false;

	if (!(d->full_ms = malloc((size_t)p->nstages * 3 * sizeof(*d->full_ms)))) {
		cli_err("octopipe run: out of host memory\n");
		return EXIT_RUNTIME;
	}
	for (int s = 0; s < p->nstages; s++)
		for (int k = 0; k < 3; k++)
			d->full_ms[s * 3 + k] = op_ms(d, s, k, false);
	if (plan_drop_collectives(p, &changed, e) < 0)
		return cli_report(e);
	if (!changed) {   /* nothing priced that the kernels leave out, after all */
		free(d->full_ms);
		d->full_ms = NULL;
		d->not_run = NULL;
	}
	return EXIT_OK;
}

int run_dry(const char *arg, bool json, double gemm_tflops, bool fit)
{
	const char *path = cli_resolve(arg, "plans");
	struct err e = ERR_INIT;
	struct plan p;
	struct dry d;
	int rc;

	if (plan_load(&p, path, &e) < 0)
		return cli_report(&e);
	memset(&d, 0, sizeof(d));
	d.p = &p;
	d.gemm_tflops = gemm_tflops;
	if (kplan_choose(&p, fit, &d.mode, &d.works, &d.o, &d.why, &e) < 0) {
		plan_release(&p);
		return cli_report(&e);
	}
	if ((d.not_run = kplan_not_run(&p, d.works, &d.o)) && (rc = price_as_run(&d, &p, &e)) != EXIT_OK) {
		free(d.works);
		plan_release(&p);
		return rc;
	}
	rc = json ? print_json(path, &d) : print_text(path, &d);
	free(d.full_ms);
	free(d.ks);
	free(d.works);
	plan_release(&p);
	return rc;
}
