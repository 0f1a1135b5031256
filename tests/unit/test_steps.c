/*
 * test_steps — octopipe.steps/1: the tuner's record loads back as the same states, every
 * file of tests/data/badsteps gets exactly its expected one-line message, and a loaded
 * step regenerates a plan.
 */
#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "fileio.h"
#include "model.h"
#include "steps.h"
#include "tune.h"
#include "../tap.h"

static char *slurp(const char *path)
{
	struct err e = ERR_INIT;
	size_t len;
	char *s = fileio_read(path, &len, &e);

	while (s && len && (s[len - 1] == '\n'))
		s[--len] = '\0';
	return s;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	const char *top = getenv("top_srcdir");
	char path[4096], *names[256];
	struct model m, big;
	struct cluster c, c8;
	struct steps s;
	struct err e = ERR_INIT;
	struct plan p;
	DIR *dir;
	struct dirent *de;
	int n = 0;

	if (!top)
		top = ABS_TOP_SRCDIR;
	snprintf(path, sizeof(path), "%s/tests/data/tiny-model.json", top);
	if (model_load(&m, path, &e) < 0)
		return printf("Bail out! %s\n", e.msg), 1;
	snprintf(path, sizeof(path), "%s/tests/data/tiny-cluster.json", top);
	if (cluster_load(&c, path, &e) < 0)
		return printf("Bail out! %s\n", e.msg), 1;

	/* a record written by the tuner */
	snprintf(path, sizeof(path), "%s/tests/data/tiny.steps", top);
	ok(steps_load(&s, path, &m, &c, 8, &e) == 0, "tests/data/tiny.steps loads (%s)", e.msg);
	is_int(s.n, 7, "with its 7 steps");
	is_int(s.microbatches, 4, "and the file's microbatches, not the caller's");
	is_str(s.model, "tiny", "the model's name");
	is_str(s.best_baseline ? s.best_baseline : "", "zb-h2 balanced", "the best baseline");
	is_int(s.evaluations, 135, "the evaluations");
	if (s.n == 7) {
		is_int(s.steps[0].phase, PHASE_START, "step 0 is the start");
		is_int(s.steps[1].state.nstages, 4, "step 1 has 4 stages");
		is_int(s.steps[1].state.device[2], 0, "stage 2 of step 1 is on device 0");
		is_int(s.steps[1].state.first[4], 4, "the boundaries end at the layer count");
		is_int(s.steps[0].state.sched.cap_extra, 2, "the scheduler knobs are read");
		ok(s.steps[0].state.sched.alternate, "alternate is read");
		/* the fields the report shows are this reader's too (report --steps and edit --adopt
		 * refuse a file alike) */
		is_int(s.steps[1].index, 1, "a step's number is read");
		ok(s.steps[1].bubble > 0.25 && s.steps[1].bubble < 0.2502, "and its bubble (%g)", s.steps[1].bubble);
		ok(tune_state_plan(&m, &c, s.microbatches, &s.steps[1].state, &p, &e) == 0,
		   "a loaded step regenerates its plan (%s)", e.msg);
		if (p.nstages == 4)
			plan_release(&p);
	}
	steps_release(&s);

	/* the shipped sample's record, on its own model and cluster */
	snprintf(path, sizeof(path), "%s/samples/models/nemotron-nano-v2-9b.json", top);
	if (model_load(&big, path, &e) == 0) {
		snprintf(path, sizeof(path), "%s/samples/clusters/8xH200.json", top);
		if (cluster_load(&c8, path, &e) == 0) {
			snprintf(path, sizeof(path), "%s/plans/nemotron-nano-v2-9b-8xH200-tuned.steps", top);
			ok(steps_load(&s, path, &big, &c8, 32, &e) == 0 && s.n > 1, "the shipped steps file loads (%s)", e.msg);
			steps_release(&s);
			cluster_release(&c8);
		}
		model_release(&big);
	}
	/* the malformed corpus: one expected line each, path-aware */
	snprintf(path, sizeof(path), "%s/tests/data/badsteps", top);
	if (chdir(path) != 0 || !(dir = opendir(".")))
		return printf("Bail out! cannot open %s\n", path), 1;
	while ((de = readdir(dir)) && n < 256)
		if (strlen(de->d_name) > 5 && strcmp(de->d_name + strlen(de->d_name) - 5, ".json") == 0)
			names[n++] = strdup(de->d_name);
	closedir(dir);
	qsort(names, (size_t)n, sizeof(*names), by_name);
	for (int i = 0; i < n; i++) {
		char exp[512], *want;

		snprintf(exp, sizeof(exp), "%.*s.expected", (int)strlen(names[i]) - 5, names[i]);
		want = slurp(exp);
		err_clear(&e);
		ok(steps_load(&s, names[i], &m, &c, 4, &e) < 0 && e.cls == ERR_INPUT && want && strcmp(e.msg, want) == 0,
		   "%s: %s", names[i], want ? want : "(no .expected file)");
		if (!want || strcmp(e.msg, want) != 0)
			printf("#   got  %s\n", e.msg);
		steps_release(&s);
		free(want);
		free(names[i]);
	}
	ok(n >= 20, "the corpus holds %d malformed steps files (at least 20)", n);
	model_release(&m);
	cluster_release(&c);
	return tap_done();
}
