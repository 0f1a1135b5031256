/*
 * run_dry — `octopipe run --backend cuda --dry-run PLAN [--json]`: the kernels the cuda
 * backend would launch for every op of a plan, with their shapes, FLOPs and bytes, from
 * the kernel plan (kplan.h) alone: no GPU, no CUDA library, so it runs everywhere and the
 * kernel plan is tested everywhere. An op is the same for every microbatch: one row per
 * stage and op kind, with how many times it runs.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
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

static int print_json(const char *path, const struct plan *p, double gemm_tflops)
{
	struct jw w = { false };
	cJSON *root = cJSON_CreateObject(), *ops;

	if (!root)
		w.oom = true;
	jw_str(&w, root, "plan", path);
	jw_str(&w, root, "backend", "cuda");
	jw_str(&w, root, "kernels", "fitted");
	jw_num(&w, root, "microbatches", p->microbatches);
	ops = jw_arr(&w, root, "ops");
	for (int s = 0; s < p->nstages; s++)
		for (int k = 0; k < (p->split_backward ? 3 : 2); k++) {
			struct kplan_gemm g = kplan_stage_proxy(p, s, k, gemm_tflops);
			cJSON *o = jw_push(&w, ops, cJSON_CreateObject()), *ks, *kn;
			char op[2] = { slot_letter(p, k), 0 };

			jw_num(&w, o, "stage", s);
			jw_num(&w, o, "device", p->stages[s].device);
			jw_str(&w, o, "op", op);
			jw_num(&w, o, "count", p->microbatches);
			jw_num(&w, o, "predicted_ms", round(g.ms * 1e6) / 1e6);
			jw_num(&w, o, "sized_for_tflops", round(kplan_tflops(p, k, gemm_tflops) * 1e6) / 1e6);
			ks = jw_arr(&w, o, "kernels");
			if (!g.reps)
				continue;
			kn = jw_push(&w, ks, cJSON_CreateObject());
			jw_str(&w, kn, "name", k == 0 ? "proxy X.W" : k == 2 ? "proxy Xt.dY" : "proxy dY.Wt");
			jw_str(&w, kn, "class", "gemm");
			jw_num(&w, kn, "m", g.m);
			jw_num(&w, kn, "n", g.n);
			jw_num(&w, kn, "k", g.k);
			jw_num(&w, kn, "reps", g.reps);
			jw_num(&w, kn, "flops", kplan_gemm_flops(&g));
			jw_num(&w, kn, "bytes", kplan_gemm_bytes(&g));
		}
	return cli_put_json(root, w.oom);
}

int run_dry(const char *arg, bool json, double gemm_tflops)
{
	const char *path = cli_resolve(arg, "plans");
	struct err e = ERR_INIT;
	struct plan p;
	int rc = EXIT_OK;

	if (plan_load(&p, path, &e) < 0)
		return cli_report(&e);
	if (json) {
		rc = print_json(path, &p, gemm_tflops);
	} else {
		printf("plan %s: the kernels of the cuda backend, without a GPU\n", path);
		printf("kernels: fitted proxies, sized for the predicted time at the throughput shown; on a GPU each is\n"
		       "timed and refitted to its op's predicted time\n\n");
		printf("%5s %6s %2s %6s %12s %8s  %-12s %6s %6s %6s %5s %12s %12s\n", "STAGE", "DEVICE", "OP", "COUNT",
		       "PREDICTED ms", "TFLOP/s", "KERNEL", "M", "N", "K", "REPS", "GFLOP", "MB");
		for (int s = 0; s < p.nstages; s++)
			for (int k = 0; k < (p.split_backward ? 3 : 2); k++) {
				struct kplan_gemm g = kplan_stage_proxy(&p, s, k, gemm_tflops);

				printf("%5d %6d %2c %6d %12.3f %8.1f  ", s, p.stages[s].device, slot_letter(&p, k), p.microbatches,
				       g.ms, kplan_tflops(&p, k, gemm_tflops));
				if (!g.reps)
					printf("%-12s\n", "(none)");
				else
					printf("%-12s %6d %6d %6d %5d %12.3f %12.3f\n",
					       k == 0 ? "proxy X.W" : k == 2 ? "proxy Xt.dY" : "proxy dY.Wt", g.m, g.n, g.k, g.reps,
					       kplan_gemm_flops(&g) / 1e9, kplan_gemm_bytes(&g) / 1e6);
			}
	}
	plan_release(&p);
	return rc;
}
