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
	if (fuzz_too_many_layers(root)) {
		cJSON_Delete(root);
		return 0;
	}
	memset(&a, 0, sizeof(a));
	fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
	if (cJSON_IsString(fmt) && strncmp(fmt->valuestring, "octopipe.arch/", 14) == 0)
		r = arch_from_json(&a, root, "fuzz", &e);
	else
		r = hfconfig_read(&a, root, "fuzz", &e);
	if (r == 0)
		fuzz_cost_round_trip(&a);
	arch_release(&a);
	cJSON_Delete(root);
	return 0;
}
