/*
 * fuzz.h — shared by the fuzz targets. Each target feeds arbitrary bytes to one loader
 * and, when the loader accepts them, checks the round trip: what is written must load
 * again. A crash, a leak, a sanitizer report or abort() here is a bug found.
 */
#ifndef OCTO_FUZZ_H
#define OCTO_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Parses, or returns NULL (the loader's error path is exercised by the caller). */
static inline cJSON *fuzz_parse(const uint8_t *data, size_t size)
{
	struct err e = ERR_INIT;

	return json_parse((const char *)data, size, "fuzz", &e);
}

/* Writes root as text and parses it again (the writer's output must be valid JSON). */
static inline cJSON *fuzz_rewrite(const cJSON *root)
{
	struct strbuf sb = STRBUF_INIT;
	struct err e = ERR_INIT;
	cJSON *again;

	json_write(&sb, root);
	again = json_parse(sb.buf, sb.len, "fuzz-rewrite", &e);
	strbuf_release(&sb);
	if (!again)
		abort();
	return again;
}

#endif
