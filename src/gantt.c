/*
 * gantt — text Gantt charts (see gantt.h). Each column covers makespan / width ms; it
 * shows the op that occupies most of that slice, so short ops never hide long ones; a
 * column the device works in for less than half of it shows ':', and only a column with
 * no work at all is a bubble (gantt_cell_of, the UI's rule too).
 */
#include "config.h"
#include "gantt.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"

enum gantt_cell gantt_cell_of(double busy, double column)
{
	if (!(busy > 0))
		return GANTT_IDLE;
	return busy < column / 2 ? GANTT_PARTLY : GANTT_BUSY;
}

void gantt_ascii(const struct timeline *t, int width, const char *name, struct strbuf *sb)
{
	double end = timeline_end_ms(t), slice;
	double *busy = NULL;
	char *row = NULL;
	int label = 6;
	bool synced = false, partly = false;
	double last_end;

	if (width < 10)
		width = 10;
	if (end <= 0) {
		strbuf_addstr(sb, "(empty timeline)\n");
		return;
	}
	slice = end / width;
	busy = calloc((size_t)width * OP_KINDS, sizeof(*busy));
	row = malloc((size_t)width + 1);
	if (!busy || !row) {
		free(busy);
		free(row);
		sb->oom = true; /* the caller's strbuf_failed() check sees it */
		return;
	}
	for (int d = 0; d < t->ndevices; d++) {
		memset(busy, 0, (size_t)width * OP_KINDS * sizeof(*busy));
		last_end = 0;
		for (int i = 0; i < t->dev[d].nops; i++) {
			const struct tl_op *op = &t->dev[d].ops[i];
			int c0 = (int)(op->start_ms / slice), c1 = (int)ceil(op->end_ms / slice);

			last_end = fmax(last_end, op->end_ms);

			for (int c = c0 < 0 ? 0 : c0; c < c1 && c < width; c++) {
				double a = fmax(op->start_ms, c * slice), b = fmin(op->end_ms, (c + 1) * slice);

				if (b > a)
					busy[c * OP_KINDS + op->kind] += b - a;
			}
		}
		for (int c = 0; c < width; c++) {
			double total = 0, best = 0;
			int k = -1;

			for (int j = 0; j < OP_KINDS; j++) {
				total += busy[c * OP_KINDS + j];
				if (busy[c * OP_KINDS + j] > best) {
					best = busy[c * OP_KINDS + j];
					k = j;
				}
			}
			switch (k < 0 ? GANTT_IDLE : gantt_cell_of(total, slice)) {
			case GANTT_IDLE: row[c] = '.'; break;
			case GANTT_PARTLY: row[c] = ':'; partly = true; break;
			default: row[c] = op_kind_char((enum op_kind)k); break;
			}
			/* an idle column while the device's gradients are still being synchronised */
			if (row[c] == '.' && t->has_metrics && d < t->metrics.ndevices && (c + 0.5) * slice >= last_end &&
			    (c + 0.5) * slice >= t->metrics.dev[d].sync_start_ms &&
			    (c + 0.5) * slice < t->metrics.dev[d].sync_end_ms) {
				row[c] = '~';
				synced = true;
			}
		}
		row[width] = '\0';
		strbuf_addf(sb, "%s%-*d|%s|\n", name, label - (int)strlen(name), d, row);
	}
	/* axis: a tick every 10 columns, each label under its tick (one that the label before
	 * reaches is skipped), in s past 100 s so that a label stays short */
	strbuf_pad(sb, ' ', (size_t)label);
	strbuf_addch(sb, '+');
	for (int c = 0; c < width; c++)
		strbuf_addch(sb, c % 10 == 0 ? '+' : '-');
	strbuf_addstr(sb, "+\n");
	{
		double unit = width * slice >= 1e5 ? 1000 : 1;
		int col = 0;

		strbuf_pad(sb, ' ', (size_t)label + 1);
		for (int c = 0; c <= width; c += 10) {
			char num[32];
			int n = snprintf(num, sizeof(num), "%g", round(c * slice / unit * 10) / 10);

			if (c > 0 && c <= col)
				continue;
			if (c + n > width + 8)
				break;
			strbuf_pad(sb, ' ', (size_t)(c - col));
			strbuf_addstr(sb, num);
			col = c + n;
		}
		strbuf_addstr(sb, unit > 1 ? " s\n" : " ms\n");
	}
	strbuf_pad(sb, ' ', (size_t)label + 1);
	strbuf_addf(sb, "F forward  I input-grad  W weight-grad  B backward  . bubble  %s%s(1 column = ",
	            partly ? ": partly idle  " : "", synced ? "~ waiting for the data-parallel sync  " : "");
	fmt_ms(sb, slice);
	strbuf_addstr(sb, ")\n");
	free(busy);
	free(row);
}
