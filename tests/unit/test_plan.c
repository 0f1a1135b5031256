/*
 * test_plan — plans resolve their model and cluster relative to the plan file, validate
 * coverage and placement, round-trip by reference and embedded, and refuse what cannot
 * be a plan (including sizes that would overflow).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "json.h"
#include "bounds.h"
#include "plan.h"
#include "../tap.h"

static int plans_equal(const struct plan *a, const struct plan *b)
{
	if (a->microbatches != b->microbatches || a->split_backward != b->split_backward ||
	    a->nstages != b->nstages || a->ndevices != b->ndevices ||
	    a->model.nlayers != b->model.nlayers || a->cluster.devices != b->cluster.devices)
		return 0;
	for (int s = 0; s < a->nstages; s++)
		if (memcmp(&a->stages[s], &b->stages[s], sizeof(a->stages[s])) != 0)
			return 0;
	for (int d = 0; d <= a->ndevices; d++)
		if (a->order_start[d] != b->order_start[d])
			return 0;
	for (long i = 0; i < plan_total_ops(a); i++)
		if (a->order[i].stage != b->order[i].stage || a->order[i].mb != b->order[i].mb ||
		    a->order[i].kind != b->order[i].kind)
			return 0;
	return 1;
}

static const char *from_text(const char *text, const char *dir)
{
	static struct err e;
	struct plan p;
	cJSON *root = json_parse(text, strlen(text), "p.json", &e);

	if (!root)
		return e.msg;
	if (plan_from_json(&p, root, "p.json", dir, &e) == 0) {
		plan_release(&p);
		cJSON_Delete(root);
		return "(accepted)";
	}
	cJSON_Delete(root);
	return e.msg;
}

/* Whether a and b write the same file (by reference and embedded). */
static int same_file(const struct plan *a, const struct plan *b)
{
	int same = 1;

	for (int embed = 0; embed < 2; embed++) {
		cJSON *ja = plan_to_json(a, embed), *jb = plan_to_json(b, embed);
		struct strbuf sa = STRBUF_INIT, sb = STRBUF_INIT;

		if (ja && jb) {
			json_write(&sa, ja);
			json_write(&sb, jb);
			same &= sa.len == sb.len && memcmp(sa.buf, sb.buf, sa.len) == 0;
		} else {
			same = 0;
		}
		strbuf_release(&sa);
		strbuf_release(&sb);
		cJSON_Delete(ja);
		cJSON_Delete(jb);
	}
	return same;
}

/* plan_copy: the copy writes the same file as the original, shares nothing (editing and
 * releasing the original leaves it whole) and keeps the references. */
static void test_copy(const char *file)
{
	struct err e = ERR_INIT;
	struct plan p, c;

	if (plan_load(&p, tap_data(file), &e) < 0) {
		ok(0, "%s loads (%s)", file, e.msg);
		return;
	}
	ok(plan_copy(&c, &p, &e) == 0, "%s: a copy is made (%s)", file, e.msg);
	ok(same_file(&p, &c), "%s: the copy writes the same file as the original", file);
	ok(c.stages != p.stages && c.order != p.order && c.model.layers != p.model.layers &&
	   (!p.model_ref || c.model_ref != p.model_ref), "%s: the copy shares no table or string", file);
	ok(p.model_ref ? c.model_ref && strcmp(c.model_ref, p.model_ref) == 0 : !c.model_ref,
	   "%s: the model's reference (or its absence) is kept", file);
	is_int(c.par.tp, p.par.tp, "%s: the layout's tp is kept", file);
	ok(c.has_parallel == p.has_parallel && c.par.dp == p.par.dp && c.par.zero == p.par.zero,
	   "%s: the whole layout is kept", file);
	p.stages[0].device = p.ndevices - 1;
	p.order[0].mb = 99;
	plan_release(&p);
	ok(plan_total_ops(&c) > 0 && c.order[0].mb != 99 && c.stages[0].device == 0,
	   "%s: the copy outlives its original's edits and release", file);
	plan_release(&c);
}

int main(void)
{
	struct err e = ERR_INIT;
	struct plan p, q;
	char tmp[] = "/tmp/octopipe-plan-XXXXXX", path[256], datadir[4096], text[8192];
	cJSON *root;

	ok(plan_load(&p, tap_data("tiny-plan.json"), &e) == 0, "the tiny plan loads (%s)", e.msg);
	is_str(p.model_ref, "tiny-model.json", "the model is referenced relative to the plan");
	is_int(p.nstages, 2, "two stages");
	is_int(p.ndevices, 2, "two devices");
	is_int(plan_total_ops(&p), 12, "2 stages x 2 microbatches x (F, I, W)");
	is_int(p.order_start[1], 6, "device 0 runs 6 ops");
	ok(p.order[2].kind == OP_I && p.order[2].stage == 0 && p.order[2].mb == 0, "device 0's third op is 0I0");
	ok(p.extra && cJSON_GetObjectItem(p.extra, "_generator"), "a plan's comment is kept");

	/* round trip by reference, from another directory */
	ok(mkdtemp(tmp) != NULL, "temporary directory");
	snprintf(path, sizeof(path), "%s/embedded.json", tmp);
	ok(plan_save(&p, path, true, &e) == 0, "an embedded plan saves (%s)", e.msg);
	ok(plan_load(&q, path, &e) == 0, "an embedded plan loads from anywhere (%s)", e.msg);
	ok(plans_equal(&p, &q), "the embedded round trip keeps the plan");
	ok(q.model_ref == NULL && q.model.nlayers == 4, "the embedded model is read inline");
	plan_release(&q);
	unlink(path);

	/* a plan saved by reference next to its model loads the same */
	fileio_dirname(tap_data("tiny-plan.json"), datadir, sizeof(datadir));
	root = plan_to_json(&p, false);
	ok(root && strcmp(cJSON_GetObjectItem(root, "model")->valuestring, "tiny-model.json") == 0,
	   "a plan by reference writes the reference, not the model");
	{
		struct strbuf sb = STRBUF_INIT;

		json_write(&sb, root);
		ok(plan_from_json(&q, root, "again.json", datadir, &e) == 0 && plans_equal(&p, &q),
		   "a plan by reference round-trips");
		plan_release(&q);
		strbuf_release(&sb);
	}
	cJSON_Delete(root);
	ok(plan_stages_on(&p, 1) == 1, "one stage on device 1");

	/* comments of a stage go back onto the stage of the same layers: kept through
	 * a rewrite, dropped with a stage whose layers an edit changed */
	root = plan_to_json(&p, true);
	cJSON_AddStringToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "stages"), 0), "_note", "stage zero");
	cJSON_AddItemToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "stages"), 1), "_owner",
	                      cJSON_Parse("{\"team\": \"b\"}"));
	ok(plan_from_json(&q, root, "notes.json", NULL, &e) == 0, "a plan with stage notes loads: %s", e.msg);
	cJSON_Delete(root);
	root = plan_to_json(&q, true);
	{
		cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "stages"), 0);
		cJSON *s1 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "stages"), 1);

		is_str(cJSON_GetStringValue(cJSON_GetObjectItem(s0, "_note")), "stage zero", "stage 0's note is written back");
		is_str(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(s1, "_owner"), "team")), "b",
		       "and stage 1's object, whole");
	}
	cJSON_Delete(root);
	q.stages[0].last++;   /* a boundary moved: both stages now hold other layers */
	q.stages[1].first++;
	root = plan_to_json(&q, true);
	ok(!cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "stages"), 0), "_note") &&
	   !cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "stages"), 1), "_owner"),
	   "a stage whose layers changed is no longer the one the note was about");
	cJSON_Delete(root);
	plan_release(&q);

	/* several stages per device (V-shape) */
	ok(plan_load(&q, tap_data("tiny-plan-v.json"), &e) == 0, "a V-shape plan with 2 stages on device 0 loads");
	is_int(plan_stages_on(&q, 0), 2, "device 0 holds stages 0 and 2");
	plan_release(&q);

	/* failures that the corpus cannot express */
	snprintf(text, sizeof(text),
	         "{\"format\": \"octopipe.plan/1\", \"model\": \"tiny-model.json\", \"cluster\": \"tiny-cluster.json\","
	         " \"microbatches\": 1000000, \"split_backward\": true,"
	         " \"stages\": [{\"layers\": [0, 0], \"device\": 0}, {\"layers\": [1, 1], \"device\": 0},"
	         " {\"layers\": [2, 2], \"device\": 1}, {\"layers\": [3, 3], \"device\": 1}],"
	         " \"schedule\": [[], []]}");
	is_str(from_text(text, datadir),
	       "p.json: schedule[0]: '0F0' is missing (each stage needs F, I and W for every one of the 1000000 microbatches)",
	       "a huge but legal plan without ops reports the first missing op");
	snprintf(text, sizeof(text),
	         "{\"format\": \"octopipe.plan/1\", \"model\": \"tiny-model.json\", \"cluster\": \"tiny-cluster.json\","
	         " \"microbatches\": 2, \"split_backward\": false,"
	         " \"stages\": [{\"layers\": [0, 3], \"device\": 0}],"
	         " \"schedule\": [[\"0F0\", \"0B0\", \"0F1\", \"0B1\", \"0F0\"], []]}");
	is_str(from_text(text, datadir), "p.json: schedule[0][4]: '0F0' appears twice (first at schedule[0][0])",
	       "an extra token is reported as the duplicate it is");
	snprintf(text, sizeof(text),
	         "{\"format\": \"octopipe.plan/1\", \"model\": \"tiny-model.json\", \"cluster\": \"tiny-cluster.json\","
	         " \"microbatches\": 2, \"split_backward\": false,"
	         " \"stages\": [{\"layers\": [0, 3], \"device\": 0}],"
	         " \"schedule\": [[\"0F0\", \"0B0\", \"0F1\", \"0B1\", \"0F0\", \"x\", \"y\"], []]}");
	is_str(from_text(text, datadir), "p.json: schedule[0]: more actions than the plan has ops (1 stages x 2 microbatches x 2)",
	       "more tokens than slots are refused before allocating for them");
	snprintf(text, sizeof(text),
	         "{\"format\": \"octopipe.plan/1\", \"model\": \"tiny-model.json\", \"cluster\": \"tiny-cluster.json\","
	         " \"microbatches\": 1, \"split_backward\": false,"
	         " \"stages\": [{\"layers\": [0, 1], \"device\": 0}, {\"layers\": [2, 3], \"device\": 1}],"
	         " \"schedule\": [[\"0F0\", \"0B0\"], [\"1F0\", \"1B0\"]]}");
	is_str(from_text(text, datadir), "(accepted)", "a fused-backward plan is accepted");
	is_str(from_text(text, "/nonexistent"),
	       "p.json: model: /nonexistent/tiny-model.json: cannot open: No such file or directory",
	       "references resolve against the plan's directory");
	plan_release(&p);
	rmdir(tmp);
	test_copy("tiny-plan.json");
	test_copy("tiny-plan-layout.json");
	return tap_done();
}
