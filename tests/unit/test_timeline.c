/* test_timeline — timelines with metrics, memory samples and transfers round-trip, and
 * the deadlock and oom parts of the metrics survive the writer. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "timeline.h"
#include "../tap.h"

int main(void)
{
	struct err e = ERR_INIT;
	struct timeline t, u;
	char tmp[] = "/tmp/octopipe-tl-XXXXXX", path[128];
	cJSON *m;
	struct metrics back;

	ok(timeline_load(&t, tap_data("tiny-timeline.json"), &e) == 0, "the tiny timeline loads (%s)", e.msg);
	is_int(t.ndevices, 2, "two devices");
	is_int(timeline_total_ops(&t), 5, "five ops");
	is_int(t.nxfers, 2, "two transfers");
	ok(t.xfers[1].kind == XFER_GRAD, "the second transfer is a gradient");
	is_dbl(timeline_end_ms(&t), 9.5, 1e-12, "the timeline ends with the last op");
	ok(t.has_metrics && t.metrics.makespan_ms == 10, "metrics are read");
	is_int(t.dev[0].nmem, 4, "memory samples are read");
	ok(t.extra && cJSON_GetObjectItem(t.extra, "_run"), "run metadata is kept");

	ok(mkdtemp(tmp) != NULL, "temporary directory");
	snprintf(path, sizeof(path), "%s/t.json", tmp);
	ok(timeline_save(&t, path, &e) == 0, "timeline_save writes");
	ok(timeline_load(&u, path, &e) == 0, "the saved timeline loads (%s)", e.msg);
	ok(u.ndevices == t.ndevices && timeline_total_ops(&u) == 5 && u.nxfers == 2 &&
	   u.dev[1].ops[0].start_ms == 2.51 && u.dev[0].mem[2].bytes == 8000000 &&
	   u.xfers[0].bytes == 524288 && u.metrics.dev[1].warmup_idle_ms == 2.5 &&
	   strcmp(u.source, "sim") == 0 && strcmp(u.plan_ref, "tiny-plan.json") == 0,
	   "save then load gives the same timeline");
	timeline_release(&u);
	unlink(path);
	rmdir(tmp);

	/* deadlock and oom */
	t.metrics.ncycle = 2;
	t.metrics.cycle = calloc(2, sizeof(*t.metrics.cycle));
	t.metrics.cycle[0] = (struct deadlock_op){ 0, { 1, 0, OP_I, 0 } };
	t.metrics.cycle[1] = (struct deadlock_op){ 1, { 0, 1, OP_F, 0 } };
	t.metrics.noom = 1;
	t.metrics.oom = calloc(1, sizeof(int));
	t.metrics.oom[0] = 1;
	m = metrics_to_json(&t.metrics);
	ok(m != NULL, "metrics with a deadlock serialise");
	ok(metrics_from_json(&back, m, "m.json", "", &e) == 0, "and read back (%s)", e.msg);
	ok(back.ncycle == 2 && back.cycle[0].op.kind == OP_I && back.cycle[1].device == 1 &&
	   back.noom == 1 && back.oom[0] == 1, "the cycle and the oom devices survive");
	metrics_release(&back);
	cJSON_Delete(m);
	timeline_release(&t);
	return tap_done();
}
