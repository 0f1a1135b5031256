/*
 * fuzz.h — shared by the fuzz targets. Each target feeds arbitrary bytes to one loader
 * and, when the loader accepts them, checks the round trip: what is written must load
 * again. A crash, a leak, a sanitizer report or abort() here is a bug found.
 */
#ifndef OCTO_FUZZ_H
#define OCTO_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "cluster.h"
#include "hardware.h"
#include "json.h"
#include "model.h"

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

/* True for a config that asks for 20 001 to 100 000 layers (num_hidden_layers, n_layer,
 * num_nextn_predict_layers, at the top or in text_config): a valid architecture that
 * takes seconds to build under ASan (1.8 KB a layer), past libFuzzer's 10 s timeout on a
 * loaded machine; the targets leave it out. Counts above the limit stay in: they are
 * refused as they are read. */
static inline bool fuzz_too_many_layers(const cJSON *root)
{
	static const char *const keys[] = { "num_hidden_layers", "n_layer", "num_nextn_predict_layers" };
	const cJSON *objs[2] = { root, cJSON_GetObjectItemCaseSensitive(root, "text_config") };

	for (int o = 0; o < 2; o++)
		for (size_t k = 0; cJSON_IsObject(objs[o]) && k < sizeof(keys) / sizeof(keys[0]); k++) {
			const cJSON *n = cJSON_GetObjectItemCaseSensitive(objs[o], keys[k]);

			if (cJSON_IsNumber(n) && n->valuedouble > 20000 && n->valuedouble <= 100000)
				return true;
		}
	return false;
}

/* The model and cluster the CSV and steps targets import against: tests/data's tiny
 * model (4 layers) on a 4-gpu cluster, so the seed schedules and steps apply. Returns 0
 * or aborts (a fixed document that does not load is a bug of the harness). */
static const char fuzz_model_json[] =
	"{\"format\": \"octopipe.model/1\", \"name\": \"tiny\", \"seq_len\": 1024, \"layers\": ["
	"{\"kind\": \"embedding+attn\", \"f_ms\": 1.5, \"b_ms\": 1.5, \"w_ms\": 1, \"param_bytes\": 4000000,"
	" \"act_bytes\": 2000000, \"act_w_bytes\": 1000000, \"out_bytes\": 524288},"
	"{\"kind\": \"attn\", \"f_ms\": 1, \"b_ms\": 1, \"w_ms\": 1, \"param_bytes\": 1000000,"
	" \"act_bytes\": 2000000, \"act_w_bytes\": 1000000, \"out_bytes\": 524288},"
	"{\"kind\": \"mamba\", \"f_ms\": 0.5, \"b_ms\": 1, \"w_ms\": 0.25, \"param_bytes\": 500000,"
	" \"act_bytes\": 1000000, \"act_w_bytes\": 0, \"out_bytes\": 524288},"
	"{\"kind\": \"attn+head\", \"f_ms\": 3, \"b_ms\": 2, \"w_ms\": 2, \"param_bytes\": 6000000,"
	" \"act_bytes\": 8000000, \"act_w_bytes\": 4000000, \"out_bytes\": 0}]}";
static const char fuzz_cluster_json[] =
	"{\"format\": \"octopipe.cluster/1\", \"name\": \"2xtest\", \"devices\": 4, \"gpus_per_node\": 2,"
	" \"mem_bytes\": 141000000000, \"intra_node\": {\"gbytes_per_s\": 450, \"latency_us\": 5},"
	" \"inter_node\": {\"gbytes_per_s\": 50, \"latency_us\": 10}}";

static inline void fuzz_tiny(struct model *m, struct cluster *c)
{
	struct err e = ERR_INIT;
	cJSON *mj = json_parse(fuzz_model_json, sizeof(fuzz_model_json) - 1, "fuzz-model", &e);
	cJSON *cj = json_parse(fuzz_cluster_json, sizeof(fuzz_cluster_json) - 1, "fuzz-cluster", &e);

	if (!mj || !cj || model_from_json(m, mj, "fuzz-model", NULL, &e) < 0 ||
	    cluster_from_json(c, cj, "fuzz-cluster", NULL, &e) < 0)
		abort();
	cJSON_Delete(mj);
	cJSON_Delete(cj);
}

/* An accepted architecture (of a sane size) must become a layer table that the model
 * writer and reader round-trip: abort() when the cost model writes one we cannot read. */
static inline void fuzz_cost_round_trip(const struct arch *a)
{
	struct err e = ERR_INIT;
	struct hardware hw;
	struct cost_opts o;
	struct model m, back;

	if (a->nlayers <= 0 || a->nlayers > 4096)
		return;
	memset(&o, 0, sizeof(o));
	o.seq = a->seq_len > 0 && a->seq_len <= 65536 ? a->seq_len : 4096;
	o.micro_batch = 1;
	o.tp = 1;
	hardware_default(&hw);
	if (arch_to_model(a, &hw, &o, "fuzz", &m, &e) == 0) {
		cJSON *out = model_to_json(&m), *again;

		if (out) {
			again = fuzz_rewrite(out);
			if (model_from_json(&back, again, "fuzz-rewrite", NULL, &e) != 0) {
				fprintf(stderr, "round trip refused: %s\n", e.msg);
				abort();
			}
			model_release(&back);
			cJSON_Delete(again);
			cJSON_Delete(out);
		}
		model_release(&m);
	}
	hardware_release(&hw);
}

#endif
