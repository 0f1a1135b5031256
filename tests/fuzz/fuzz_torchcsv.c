/* fuzz_torchcsv — `octopipe import torch-csv` (PyTorch's schedule CSV, RFC 4180 cells) of
 * the tiny model on 4 gpus; an accepted schedule must export and import again to the same
 * CSV. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "torchcsv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e = ERR_INIT;
	struct model m;
	struct cluster c;
	struct plan p, q;

	fuzz_tiny(&m, &c);
	if (torchcsv_import(&p, (const char *)data, size, "fuzz", &m, NULL, &c, NULL, 0, NULL, &e) == 0) {
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		if (torchcsv_export(&p, &a, &e) < 0) {
			/* refused only where a rank below the last used one holds no stage */
			if (!strstr(e.msg, "holds no stage"))
				abort();
			strbuf_release(&a);
			plan_release(&p);
			goto out;
		}
		if (torchcsv_import(&q, a.buf, a.len, "fuzz-export", &m, NULL, &c, NULL, p.microbatches, NULL, &e) != 0) {
			fprintf(stderr, "%s\n", e.msg);
			abort(); /* we exported a schedule we cannot import */
		}
		if (torchcsv_export(&q, &b, &e) < 0)
			abort(); /* what was exported once exports again */
		if (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)
			abort(); /* the round trip is not exact */
		strbuf_release(&a);
		strbuf_release(&b);
		plan_release(&q);
		plan_release(&p);
	}
out:
	model_release(&m);
	cluster_release(&c);
	return 0;
}
