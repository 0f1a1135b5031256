/* fuzz_arch — architecture readers on arbitrary input: an octopipe.arch/1 document or a
 * Hugging Face config.json; whatever is accepted must become a layer table that the
 * model writer and reader round-trip. */
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
	cJSON *root = fuzz_parse(data, size), *fmt;
	int r;

	if (!root)
		return 0;
	memset(&a, 0, sizeof(a));
	fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
	if (cJSON_IsString(fmt) && strncmp(fmt->valuestring, "octopipe.arch/", 14) == 0)
		r = arch_from_json(&a, root, "fuzz", &e);
	else
		r = hfconfig_read(&a, root, "fuzz", &e);
	if (r == 0 && a.nlayers > 0 && a.nlayers <= 4096) {
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
