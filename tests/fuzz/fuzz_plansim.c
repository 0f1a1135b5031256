/*
 * fuzz_plansim — a plan with its model and cluster embedded, loaded and simulated: the
 * simulator must never crash, must report deadlock and out-of-memory as values (an error
 * of class ERR_INFEASIBLE naming the cycle, or devices in metrics.oom), and whatever it
 * predicts must keep the plan's rules, as tlcheck checks an executor's run: every op once
 * on its stage's device in the plan's order, no two ops of a device overlapping (a pair
 * of the plan may), every dependency and transfer respected. The metrics must be sane.
 * The policy-driven scheduler's order, replayed with transfers overlapped as the policy
 * assumes them, must run and keep the rules as well.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "fuzz.h"
#include "plan.h"
#include "sim.h"
#include "timeline.h"
#include "tlcheck.h"

#define FUZZ_MAX_OPS 20000      /* keeps one input quick */

static void check_metrics(const struct plan *p, const struct metrics *m)
{
	const double eps = 1e-6;

	if (!(m->makespan_ms >= 0) || !isfinite(m->makespan_ms) || m->ndevices != p->ndevices)
		abort();
	if (!(m->bubble_ratio >= -eps && m->bubble_ratio <= 1 + eps))
		abort();
	for (int d = 0; d < m->ndevices; d++)
		if (!(m->dev[d].busy_ms >= 0) || m->dev[d].busy_ms > m->makespan_ms * (1 + eps) + eps)
			abort();
	for (int i = 0; i < m->noom; i++)
		if (m->oom[i] < 0 || m->oom[i] >= p->ndevices)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e = ERR_INIT;
	struct plan p;
	cJSON *root = fuzz_parse(data, size);

	if (!root)
		return 0;
	if (plan_from_json(&p, root, "fuzz", "/nonexistent-octopipe-fuzz", &e) == 0) {
		if (plan_total_ops(&p) <= FUZZ_MAX_OPS && p.ndevices <= 256) {
			struct sim s = { 0 };
			struct sim_opts o;
			struct metrics m;
			struct timeline t;

			sim_opts_default(&o);
			o.record = true;
			if (sim_run(&s, &p, &o, &m, &e) == 0) {
				check_metrics(&p, &m);
				if (sim_timeline(&s, &p, &m, &t, &e) != 0)
					abort();
				if (timeline_check_plan(&p, &t, 1e-6, &e) != 0) {
					fprintf(stderr, "%s\n", e.msg);
					abort(); /* the simulator broke its own plan's rules */
				}
				timeline_release(&t);
			} else if (e.cls == ERR_INFEASIBLE) {
				if (m.ncycle < 1)
					abort(); /* a deadlock must name its cycle */
			} else if (e.cls != ERR_RUNTIME) {
				fprintf(stderr, "%s\n", e.msg);
				abort();
			}
			metrics_release(&m);
			/* the policy-driven scheduler on the same stages: the order it chose, replayed
			 * order-driven, must run (no deadlock) and keep the rules too */
			o.policy_driven = true;
			o.record = true;
			if (sim_run(&s, &p, &o, &m, &e) == 0) {
				check_metrics(&p, &m);
				if (sim_apply_order(&s, &p, &e) != 0) {
					fprintf(stderr, "%s\n", e.msg);
					abort(); /* the policy ran every op, so its order is complete */
				}
				metrics_release(&m);
				/* the policy overlaps transfers (sim.c): its order is OctoPipe's, run as
				 * edit.c's reorder runs it, with transfers overlapped; a blocking plan's
				 * rendezvous could deadlock an order no blocking runtime would choose */
				p.comm = PLAN_COMM_OVERLAP;
				o.policy_driven = false;
				err_clear(&e);
				if (sim_run(&s, &p, &o, &m, &e) != 0) {
					if (e.cls != ERR_RUNTIME) {
						fprintf(stderr, "%s\n", e.msg);
						abort(); /* the policy's own order deadlocks */
					}
				} else {
					check_metrics(&p, &m);
					if (sim_timeline(&s, &p, &m, &t, &e) != 0)
						abort();
					if (timeline_check_plan(&p, &t, 1e-6, &e) != 0) {
						fprintf(stderr, "%s\n", e.msg);
						abort();
					}
					timeline_release(&t);
				}
			}
			metrics_release(&m);
			sim_release(&s);
		}
		plan_release(&p);
	}
	cJSON_Delete(root);
	return 0;
}
