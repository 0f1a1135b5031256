/*
 * test_model — layer tables load in both forms to the same table, split bw_ms by the
 * stated rule, round-trip through the writer exactly, keep unknown fields, and report
 * per-kind statistics and the heaviest layers correctly.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "json.h"
#include "model.h"
#include "../tap.h"

static int layers_equal(const struct model *a, const struct model *b)
{
	if (a->nlayers != b->nlayers || a->seq_len != b->seq_len ||
	    a->micro_batch_size != b->micro_batch_size || strcmp(a->name, b->name) != 0)
		return 0;
	for (int i = 0; i < a->nlayers; i++) {
		const struct layer *x = &a->layers[i], *y = &b->layers[i];

		if (strcmp(x->kind, y->kind) || x->f_ms != y->f_ms || x->b_ms != y->b_ms ||
		    x->w_ms != y->w_ms || x->param_bytes != y->param_bytes ||
		    x->act_bytes != y->act_bytes || x->act_w_bytes != y->act_w_bytes ||
		    x->out_bytes != y->out_bytes)
			return 0;
	}
	return 1;
}

static char *save_text(const struct model *m)
{
	struct strbuf sb = STRBUF_INIT;
	cJSON *root = model_to_json(m);

	json_write(&sb, root);
	cJSON_Delete(root);
	return strbuf_detach(&sb);
}

int main(void)
{
	struct err e = ERR_INIT;
	struct model a, b, c;
	struct model_kind_stats *ks, t;
	char tmp[] = "/tmp/octopipe-model-XXXXXX", path[128], *t1, *t2;
	int heavy[3], nk, n;

	ok(model_load(&a, tap_data("tiny-model.json"), &e) == 0, "the expanded tiny model loads (%s)", e.msg);
	ok(model_load(&b, tap_data("tiny-model-compact.json"), &e) == 0, "the compact tiny model loads (%s)", e.msg);
	is_int(a.nlayers, 4, "four layers");
	ok(layers_equal(&a, &b), "pattern + kinds + pre/post expand to the same layers");
	is_dbl(b.layers[0].w_ms, 1.0, 1e-12, "bw_ms 2.5 with w_fraction 0.4 gives W 1.0");
	is_dbl(b.layers[0].b_ms, 1.5, 1e-12, "and B 1.5");
	is_dbl(b.layers[1].w_ms, 1.0, 1e-12, "bw_ms without w_fraction splits 50/50");
	is_int(a.micro_batch_size, 1, "micro_batch_size defaults to 1");
	ok(a.layers[2].extra && cJSON_GetObjectItem(a.layers[2].extra, "_note"), "a layer's comment is kept");
	ok(a.extra && cJSON_GetObjectItem(a.extra, "_hidden_size"), "a model's comment is kept");

	/* round trip through a file */
	ok(mkdtemp(tmp) != NULL, "temporary directory");
	snprintf(path, sizeof(path), "%s/m.json", tmp);
	ok(model_save(&a, path, &e) == 0, "model_save writes (%s)", e.msg);
	ok(model_load(&c, path, &e) == 0, "the saved model loads (%s)", e.msg);
	ok(layers_equal(&a, &c), "save then load gives the same table");
	ok(c.layers[2].extra && cJSON_GetObjectItem(c.layers[2].extra, "_note"), "comments survive the round trip");
	t1 = save_text(&a);
	t2 = save_text(&c);
	is_str(t2, t1, "a second save is byte-identical");
	free(t1);
	free(t2);
	model_release(&c);
	unlink(path);
	rmdir(tmp);

	/* statistics */
	ks = model_kind_stats(&a, &nk);
	is_int(nk, 4, "four kinds in first-appearance order");
	is_str(ks[0].kind, "embedding+attn", "the first kind is the embedding layer");
	free(ks);
	t = model_totals(&a);
	is_dbl(t.f_ms, 6.0, 1e-12, "F total");
	is_dbl(t.b_ms + t.w_ms, 9.75, 1e-12, "backward total");
	is_int(t.param_bytes, 11500000, "weight bytes total");
	n = model_heaviest(&a, heavy, 3);
	is_int(n, 3, "three heaviest asked, three given");
	ok(heavy[0] == 3 && heavy[1] == 0 && heavy[2] == 1, "heaviest: head (7), embedding (4), attn (3)");
	is_int(model_heaviest(&a, heavy, 0), 0, "zero heaviest asked, none given");
	model_release(&a);
	model_release(&b);
	model_release(&a); /* releasing twice is harmless */
	return tap_done();
}
