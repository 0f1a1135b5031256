/* fuzz_model — model_from_json on arbitrary input; accepted input must round-trip. */
#include "config.h"

#include "fuzz.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e = ERR_INIT;
	struct model x, y;
	cJSON *root = fuzz_parse(data, size), *out, *again;

	if (!root)
		return 0;
	if (model_from_json(&x, root, "fuzz", NULL, &e) == 0) {
		out = model_to_json(&x);
		if (out) {
			again = fuzz_rewrite(out);
			if (model_from_json(&y, again, "fuzz-rewrite", NULL, &e) != 0)
				abort(); /* we wrote something we cannot read back */
			model_release(&y);
			cJSON_Delete(again);
			cJSON_Delete(out);
		}
		model_release(&x);
	}
	cJSON_Delete(root);
	return 0;
}
