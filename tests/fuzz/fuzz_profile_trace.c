/* fuzz_profile_trace — `octopipe import profile` of a Chrome trace (traceEvents). */
#include "config.h"

#include "fuzz_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_profile(data, size, 1);
}
