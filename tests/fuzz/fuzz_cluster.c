/* fuzz_cluster — cluster_from_json on arbitrary input; accepted input must round-trip. */
#include "config.h"

#include "fuzz.h"
#include "cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e = ERR_INIT;
	struct cluster x, y;
	cJSON *root = fuzz_parse(data, size), *out, *again;

	if (!root)
		return 0;
	if (cluster_from_json(&x, root, "fuzz", NULL, &e) == 0) {
		out = cluster_to_json(&x);
		if (out) {
			again = fuzz_rewrite(out);
			if (cluster_from_json(&y, again, "fuzz-rewrite", NULL, &e) != 0)
				abort(); /* we wrote something we cannot read back */
			cluster_release(&y);
			cJSON_Delete(again);
			cJSON_Delete(out);
		}
		cluster_release(&x);
	}
	cJSON_Delete(root);
	return 0;
}
