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
	if (fuzz_too_many_layers(root)) {
		cJSON_Delete(root);
		return 0;
	}
	memset(&a, 0, sizeof(a));
	if (hfconfig_read(&a, root, "fuzz", &e) == 0)
		fuzz_cost_round_trip(&a);
	arch_release(&a);
	cJSON_Delete(root);
	return 0;
}
