/* fuzz_hfconfig — hfconfig_read (a Hugging Face config.json, what `octopipe cost` takes)
 * on arbitrary input, whatever its "format"; an accepted architecture must become a layer
 * table that the model writer and reader round-trip. */
#include "config.h"

#include <string.h>

#include "arch.h"
#include "fuzz.h"
#include "hardware.h"
#include "hfconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e = ERR_INIT;
	struct arch a;
	cJSON *root = fuzz_parse(data, size);

	if (!root)
		return 0;
	memset(&a, 0, sizeof(a));
	if (hfconfig_read(&a, root, "fuzz", &e) == 0 && a.nlayers > 0 && a.nlayers <= 4096) {
		struct hardware hw;
		struct cost_opts o;
		struct model m, back;

		memset(&o, 0, sizeof(o));
		o.seq = a.seq_len > 0 && a.seq_len <= 65536 ? a.seq_len : 4096;
		o.micro_batch = 1;
		o.tp = 1;
		hardware_default(&hw);
		if (arch_to_model(&a, &hw, &o, "fuzz", &m, &e) == 0) {
			cJSON *out = model_to_json(&m), *again;

			if (out) {
				again = fuzz_rewrite(out);
				if (model_from_json(&back, again, "fuzz-rewrite", NULL, &e) != 0)
					abort(); /* the cost model produced a table we cannot read back */
				model_release(&back);
				cJSON_Delete(again);
				cJSON_Delete(out);
			}
			model_release(&m);
		}
		hardware_release(&hw);
	}
	arch_release(&a);
	cJSON_Delete(root);
	return 0;
}
