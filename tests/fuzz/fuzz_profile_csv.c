/* fuzz_profile_csv — `octopipe import profile` of CSV records (name,phase,ms; RFC 4180). */
#include "config.h"

#include "fuzz_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_profile(data, size, 0);
}
