/*
 * action — one unit of pipeline work and its text form.
 *
 * Tokens follow PyTorch pipelining's compute actions: "<stage><F|I|W|B><microbatch>",
 * e.g. "3F12" = forward of stage 3 on microbatch 12. F forward, I input-gradient backward,
 * W weight-gradient backward, B the full (fused I+W) backward. Numbers are decimal without
 * sign or leading zeros, so every action has exactly one spelling.
 */
#ifndef OCTO_ACTION_H
#define OCTO_ACTION_H

#include <stddef.h>
#include <stdint.h>

enum op_kind { OP_F = 0, OP_I = 1, OP_W = 2, OP_B = 3, OP_KINDS = 4 };

struct action {
	int32_t stage;
	int32_t mb;
	uint8_t kind; /* enum op_kind */
	uint8_t pair; /* 1: overlapped with the next action of the list ("0F3+7I2"): the two
	               * start together, once both have their inputs (DualPipe's F&B) */
};

/* Longest token: two 9-digit numbers and the letter. */
#define ACTION_TEXT_MAX 24

/* Parses a token; returns 0, or -1 when s is not a well-formed action. */
int action_parse(const char *s, struct action *a);
/* Reads 1..9 decimal digits without a leading zero (except "0" itself) into *out: the
 * text after them, or NULL when s does not start with such a number. */
const char *action_number(const char *s, int32_t *out);
/* Writes the token into out (at least ACTION_TEXT_MAX bytes); returns out. */
char *action_format(const struct action *a, char *out);
/* 'F', 'I', 'W', 'B'. */
char op_kind_char(enum op_kind k);
/* The op's slot among a (stage, microbatch)'s three: 0 forward, 1 input-grad or full
 * backward, 2 weight-grad (the simulator, the protocol and the emulators index by it). */
static inline int op_kind_slot(int kind)
{
	return kind == OP_F ? 0 : kind == OP_W ? 2 : 1;
}
/* The one op-index formula: (stage, microbatch, slot) in a table of `slots` entries per
 * microbatch (3: F, I or B, W; 2 without W), stages outermost, microbatches of a stage
 * consecutive. The simulator, the plan's coverage check, the timeline checker, the
 * protocol and the payload store all index by it. */
static inline long op_slot_index(int stage, int microbatches, int mb, int slots, int slot)
{
	return ((long)stage * microbatches + mb) * slots + slot;
}
/* Inverse of op_kind_char; -1 for anything else. */
int op_kind_from_char(char c);
/* "forward", "input-grad", "weight-grad", "backward". */
const char *op_kind_name(enum op_kind k);

#endif
