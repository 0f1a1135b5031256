/*
 * megatron — export of the partition as a Megatron pipeline layout (see megatron.h).
 * Layer kinds that mention the embedding or the head become E and L around the "t" of
 * the decoder layer they were folded into.
 */
#include "config.h"
#include "megatron.h"

#include <stdbool.h>
#include <string.h>

static void flush_run(struct strbuf *sb, int run)
{
	if (run == 1)
		strbuf_addch(sb, 't');
	else if (run > 1)
		strbuf_addf(sb, "t*%d", run);
}

int megatron_layout(const struct plan *p, struct strbuf *sb, struct err *e)
{
	int used = 0;

	for (int s = 0; s < p->nstages; s++)
		if (p->stages[s].device + 1 > used)
			used = p->stages[s].device + 1;
	for (int s = 0; s < p->nstages; s++)
		if (p->stages[s].device != s % used)
			return err_set(e, ERR_INPUT, "a Megatron layout needs stage s on device s mod %d; this plan places "
			               "stage %d on device %d", used, s, p->stages[s].device);
	if (p->nstages % used != 0)
		return err_set(e, ERR_INPUT, "a Megatron layout needs the same number of stages on every device "
		               "(%d stages on %d devices)", p->nstages, used);
	for (int s = 0; s < p->nstages; s++) {
		int run = 0;

		if (s)
			strbuf_addch(sb, '|');
		for (int l = p->stages[s].first; l <= p->stages[s].last; l++) {
			const char *kind = p->model.layers[l].kind;
			bool emb = strstr(kind, "embed") != NULL, head = strstr(kind, "head") != NULL ||
			           strstr(kind, "loss") != NULL;
			bool only = strcmp(kind, "embedding") == 0 || strcmp(kind, "head") == 0 ||
			            strcmp(kind, "loss") == 0 || strcmp(kind, "head+loss") == 0;

			if (emb) {
				flush_run(sb, run);
				strbuf_addch(sb, 'E');
				run = 0;
			}
			run += !only;
			if (head) {
				flush_run(sb, run);
				strbuf_addch(sb, 'L');
				run = 0;
			}
		}
		flush_run(sb, run);
	}
	return 0;
}
