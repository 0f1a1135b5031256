/*
 * samples.h — a unit test's way to the bundled samples: a model of samples/models and a
 * cluster of samples/clusters by name, found from $top_srcdir (make check sets it) or
 * the current directory. A failed load is a failed assertion, named.
 */
#ifndef OCTO_TEST_SAMPLES_H
#define OCTO_TEST_SAMPLES_H

#include <stdio.h>
#include <stdlib.h>

#include "cluster.h"
#include "model.h"
#include "../tap.h"

static inline int load_sample(const char *model, const char *cluster, struct model *m, struct cluster *c)
{
	const char *top = getenv("top_srcdir");
	char mp[4096], cp[4096];
	struct err e = ERR_INIT;

	snprintf(mp, sizeof(mp), "%s/samples/models/%s.json", top ? top : ".", model);
	snprintf(cp, sizeof(cp), "%s/samples/clusters/%s.json", top ? top : ".", cluster);
	if (model_load(m, mp, &e) < 0) {
		ok(0, "%s loads: %s", model, e.msg);
		return -1;
	}
	if (cluster_load(c, cp, &e) < 0) {
		model_release(m);
		ok(0, "%s loads: %s", cluster, e.msg);
		return -1;
	}
	return 0;
}

#endif
