/* fuzz_timeline — timeline_from_json on arbitrary input; accepted input must round-trip. */
#include "config.h"

#include "fuzz.h"
#include "timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e = ERR_INIT;
	struct timeline x, y;
	cJSON *root = fuzz_parse(data, size), *out, *again;

	if (!root)
		return 0;
	if (timeline_from_json(&x, root, "fuzz", &e) == 0) {
		out = timeline_to_json(&x);
		if (out) {
			again = fuzz_rewrite(out);
			if (timeline_from_json(&y, again, "fuzz-rewrite", &e) != 0)
				abort(); /* we wrote something we cannot read back */
			timeline_release(&y);
			cJSON_Delete(again);
			cJSON_Delete(out);
		}
		timeline_release(&x);
	}
	cJSON_Delete(root);
	return 0;
}
