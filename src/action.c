/* action — parse and format "<stage><F|I|W|B><microbatch>" tokens (see action.h). */
#include "action.h"

#include <stdio.h>

static const char kind_chars[OP_KINDS] = { 'F', 'I', 'W', 'B' };
static const char *const kind_names[OP_KINDS] = { "forward", "input-grad", "weight-grad", "backward" };

char op_kind_char(enum op_kind k)
{
	return (unsigned)k < OP_KINDS ? kind_chars[k] : '?';
}

const char *op_kind_name(enum op_kind k)
{
	return (unsigned)k < OP_KINDS ? kind_names[k] : "unknown";
}

int op_kind_from_char(char c)
{
	for (int k = 0; k < OP_KINDS; k++)
		if (kind_chars[k] == c)
			return k;
	return -1;
}

const char *action_number(const char *s, int32_t *out)
{
	int32_t v = 0;
	int n = 0;

	if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
		return NULL;
	while (*s >= '0' && *s <= '9') {
		if (++n > 9)
			return NULL;
		v = v * 10 + (*s - '0');
		s++;
	}
	if (n == 0)
		return NULL;
	*out = v;
	return s;
}

int action_parse(const char *s, struct action *a)
{
	struct action r;
	int k;

	if (!s || !(s = action_number(s, &r.stage)))
		return -1;
	k = op_kind_from_char(*s);
	if (k < 0)
		return -1;
	r.kind = (uint8_t)k;
	if (!(s = action_number(s + 1, &r.mb)) || *s)
		return -1;
	*a = r;
	return 0;
}

char *action_format(const struct action *a, char *out)
{
	snprintf(out, ACTION_TEXT_MAX, "%d%c%d", (int)a->stage, op_kind_char((enum op_kind)a->kind), (int)a->mb);
	return out;
}
