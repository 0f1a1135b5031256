/* fuzz_plan — plan_from_json on arbitrary input (model and cluster must be embedded: file
 * references resolve against a directory that does not exist); accepted plans must
 * round-trip through the writer. */
#include "config.h"

#include "fuzz.h"
#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e = ERR_INIT;
	struct plan x, y;
	cJSON *root = fuzz_parse(data, size), *out, *again;

	if (!root)
		return 0;
	if (plan_from_json(&x, root, "fuzz", "/nonexistent-octopipe-fuzz", &e) == 0) {
		out = plan_to_json(&x, true);
		if (out) {
			again = fuzz_rewrite(out);
			if (plan_from_json(&y, again, "fuzz-rewrite", "/nonexistent-octopipe-fuzz", &e) != 0)
				abort();
			plan_release(&y);
			cJSON_Delete(again);
			cJSON_Delete(out);
		}
		plan_release(&x);
	}
	cJSON_Delete(root);
	return 0;
}
