/*
 * fuzz_profile.h — shared by fuzz_profile_csv and fuzz_profile_trace: profile_import() of
 * arbitrary records against fixed rules (a layer group, kind and phase groups, fixed
 * layers); an accepted profile must be a layer table the model reader takes back.
 */
#ifndef OCTO_FUZZ_PROFILE_H
#define OCTO_FUZZ_PROFILE_H

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "profile.h"

static const char fuzz_rules_json[] =
	"{\"format\": \"octopipe.rules/1\", \"name\": \"fuzz\", \"seq_len\": 2048, \"w_fraction\": 0.25,"
	" \"rules\": ["
	"{\"pattern\": \"^embed_tokens$\", \"layer\": 0, \"kind\": \"embedding\"},"
	"{\"pattern\": \"^decoder\\\\.layers\\\\.(?<layer>\\\\d+)\\\\.(?<kind>\\\\w+)(?:\\\\.(?<phase>\\\\w+))?\"},"
	"{\"pattern\": \"^(?:blk(?<layer>\\\\d*)|lm_head)\", \"phase\": \"BW\"},"
	"{\"pattern\": \"^lm_head\", \"layer\": 3, \"kind\": \"head\"}]}";

/* trace: 1 to fuzz Chrome traces (input starting with '{' or '['), 0 for CSV records */
static inline int fuzz_profile(const uint8_t *data, size_t size, int trace)
{
	struct err e = ERR_INIT;
	struct profile_rules r;
	struct profile_stats st;
	struct model m, back;
	cJSON *rj;
	size_t k = 0;

	while (k < size && isspace(data[k]))
		k++;
	if ((k < size && (data[k] == '{' || data[k] == '[')) != trace)
		return 0;
	rj = json_parse(fuzz_rules_json, sizeof(fuzz_rules_json) - 1, "fuzz-rules", &e);
	if (!rj || profile_rules_from_json(&r, rj, "fuzz-rules", &e) < 0)
		abort();
	cJSON_Delete(rj);
	if (profile_import(&r, (const char *)data, size, "fuzz", 1 + (int)(size % 3), &m, &st, &e) == 0) {
		cJSON *out = model_to_json(&m), *again;

		if (m.nlayers < 1 || st.matched + st.unmatched != st.records)
			abort();
		for (int i = 0; i < m.nlayers; i++)
			if (!(m.layers[i].f_ms >= 0 && m.layers[i].b_ms >= 0 && m.layers[i].w_ms >= 0) ||
			    !isfinite(m.layers[i].f_ms + m.layers[i].b_ms + m.layers[i].w_ms))
				abort();
		if (out) {
			again = fuzz_rewrite(out);
			if (model_from_json(&back, again, "fuzz-rewrite", NULL, &e) != 0) {
				fprintf(stderr, "%s\n", e.msg);
				abort(); /* an imported profile the model reader refuses */
			}
			model_release(&back);
			cJSON_Delete(again);
			cJSON_Delete(out);
		}
		model_release(&m);
	}
	strbuf_release(&st.unmatched_names);
	profile_rules_release(&r);
	return 0;
}

#endif
