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
};

/* The kernels of stage s's slot k into d->ks, growing it; how many, or -1 out of memory. */
static int op_kernels(struct dry *d, int s, int k)
{
	int n = kplan_kernels(d->p, d->works, &d->o, d->gemm_tflops, s, k, d->ks, d->max);

	if (n > d->max) {
		struct kernel *more = realloc(d->ks, (size_t)n * sizeof(*more));

		if (!more)
			return -1;
		d->ks = more;
		d->max = n;
		n = kplan_kernels(d->p, d->works, &d->o, d->gemm_tflops, s, k, d->ks, d->max);
	}
	return n;
}

static int print_json(const char *path, struct dry *d)
{
	const struct plan *p = d->p;
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *ops;
	const char *not_run;

	if (!root)
		w.oom = true;
	jw_str(&w, root, "plan", path);
	jw_str(&w, root, "backend", "cuda");
	jw_str(&w, root, "kernels", kplan_mode_name(d->mode));
	if (d->why)
		jw_str(&w, root, "kernels_note", d->why);
	if ((not_run = kplan_not_run(d->works, plan_src_model(d->p)->nlayers, &d->o)))
		jw_str(&w, root, "not_run", not_run);
	jw_num(&w, root, "microbatches", p->microbatches);
	ops = jw_arr(&w, root, "ops");
	for (int s = 0; s < p->nstages && !w.oom; s++)
		for (int k = 0; k < (p->split_backward ? 3 : 2); k++) {
			double ms[3];
			int n = op_kernels(d, s, k);
			cJSON *o = jw_push(&w, ops, cJSON_CreateObject()), *ks;
			char op[2] = { slot_letter(p, k), 0 };

			if (n < 0) {
				w.oom = true;
				break;
			}
			plan_stage_ms(p, s, ms);
			jw_num(&w, o, "stage", s);
			jw_num(&w, o, "device", p->stages[s].device);
			jw_str(&w, o, "op", op);
			jw_num(&w, o, "count", p->microbatches);
			jw_num(&w, o, "predicted_ms", r6(ms[k] / p->cluster.device_speed[p->stages[s].device]));
			if (!d->works)
				jw_num(&w, o, "sized_for_tflops", r6(kplan_tflops(p, k, d->gemm_tflops)));
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
				jw_num(&w, kn, "launches", x->launches);
			}
		}
	return cli_put_json(root, w.oom);
}

static int print_text(const char *path, struct dry *d)
{
	const struct plan *p = d->p;

	printf("plan %s: the kernels of the cuda backend, without a GPU\n", path);
	if (d->works) {
		const char *nr = kplan_not_run(d->works, plan_src_model(d->p)->nlayers, &d->o);

		printf("kernels: architecture (the cost model's kernel list of each layer, measured as it runs)\n");
		if (nr)
			printf("not run: %s\n", nr);
		printf("\n");
	}
	else
		printf("kernels: fitted (%s)\nproxies sized for the predicted time at the throughput of the cluster's GEMMs;\n"
		       "on a GPU each is timed and refitted to its op's predicted time\n\n",
		       d->why ? d->why : "as --fit asks");
	printf("%5s %6s %2s %6s %12s  %-16s %-12s %8s %8s %8s %6s %12s %12s\n", "STAGE", "DEVICE", "OP", "COUNT",
	       "PREDICTED ms", "KERNEL", "CLASS", "M", "N", "K", "GROUPS", "GFLOP", "MB");
	for (int s = 0; s < p->nstages; s++)
		for (int k = 0; k < (p->split_backward ? 3 : 2); k++) {
			double ms[3];
			int n = op_kernels(d, s, k);

			if (n < 0) {
				cli_err("octopipe run: out of host memory\n");
				return EXIT_RUNTIME;
			}
			plan_stage_ms(p, s, ms);
			printf("%5d %6d %2c %6d %12.3f", s, p->stages[s].device, slot_letter(p, k), p->microbatches,
			       ms[k] / p->cluster.device_speed[p->stages[s].device]);
			if (!n)
				printf("  (none)\n");
			for (int i = 0; i < n; i++) {
				const struct kernel *x = &d->ks[i];

				if (i)
					printf("%5s %6s %2s %6s %12s", "", "", "", "", "");
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
	rc = json ? print_json(path, &d) : print_text(path, &d);
	free(d.ks);
	free(d.works);
	plan_release(&p);
	return rc;
}
