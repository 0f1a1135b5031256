/* fuzz_steps — steps_from_json (octopipe.steps/1, what `tui --steps` loads) for the tiny
 * model on 4 gpus; every accepted step small enough to be quick must regenerate a plan
 * (tune_state_plan) that the plan reader accepts back. */
#include "config.h"

#include <stdio.h>

#include "fuzz.h"
#include "steps.h"
#include "tune.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e = ERR_INIT;
	struct model m;
	struct cluster c;
	struct steps s;
	cJSON *root = fuzz_parse(data, size);

	if (!root)
		return 0;
	fuzz_tiny(&m, &c);
	if (steps_from_json(&s, root, "fuzz", &m, &c, 4, &e) == 0) {
		if (s.n < 1 || s.microbatches < 1)
			abort();
		for (int i = 0; i < s.n && i < 4; i++) {
			struct plan p, back;
			cJSON *out, *again;

			if ((long)s.steps[i].state.nstages * s.microbatches > 2000)
				continue;
			if (tune_state_plan(&m, &c, s.microbatches, &s.steps[i].state, &p, &e) != 0) {
				fprintf(stderr, "%s\n", e.msg);
				abort(); /* an accepted step that yields no plan */
			}
			out = plan_to_json(&p, true);
			if (out) {
				again = fuzz_rewrite(out);
				if (plan_from_json(&back, again, "fuzz-rewrite", "/nonexistent-octopipe-fuzz", &e) != 0) {
					fprintf(stderr, "%s\n", e.msg);
					abort(); /* a regenerated plan the plan reader refuses */
				}
				plan_release(&back);
				cJSON_Delete(again);
				cJSON_Delete(out);
			}
			plan_release(&p);
		}
	}
	steps_release(&s);
	model_release(&m);
	cluster_release(&c);
	cJSON_Delete(root);
	return 0;
}
