/*
 * gantt — a timeline as plain-text Gantt chart for terminals and logs: one row per device,
 * one character per time slice, the op kind by glyph (F forward, I input-grad, W
 * weight-grad, B backward, '.' bubble), and a time axis with ticks in ms.
 */
#ifndef OCTO_GANTT_H
#define OCTO_GANTT_H

#include "strbuf.h"
#include "timeline.h"

/* Appends the chart (several lines, each ending in '\n') to sb; width is the number of
 * time columns (at least 10). row names a row ("gpu", or "pp" where each row is a
 * pipeline rank of several GPUs: a tensor-parallel group, data-parallel replicas). */
void gantt_ascii(const struct timeline *t, int width, const char *row, struct strbuf *sb);

#endif
