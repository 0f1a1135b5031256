/* test_action — action tokens parse and format exactly, and malformed ones are refused. */
#include "config.h"

#include "action.h"
#include "../tap.h"

int main(void)
{
	static const char *const good[] = { "0F0", "3I12", "15W7", "2B0", "999999999F999999999" };
	static const char *const bad[] = {
		"", "F0", "0F", "0Q1", "3Q1", "01F0", "0F01", "-1F0", "0F-1", "0F1x", " 0F1", "0F1 ",
		"1234567890F0", "0f0", "0FF0", "0SEND_F0", "0F1.5",
	};
	struct action a;
	char buf[ACTION_TEXT_MAX];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ok(action_parse(good[i], &a) == 0, "'%s' parses", good[i]);
		is_str(action_format(&a, buf), good[i], "'%s' formats back to itself", good[i]);
	}
	ok(action_parse("3I12", &a) == 0 && a.stage == 3 && a.mb == 12 && a.kind == OP_I,
	   "'3I12' is stage 3, input-grad, microbatch 12");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(action_parse(bad[i], &a) < 0, "'%s' is not an action", bad[i]);
	ok(action_parse(NULL, &a) < 0, "NULL is not an action");
	is_int(op_kind_from_char('W'), OP_W, "W is the weight-grad kind");
	is_int(op_kind_from_char('x'), -1, "x is no kind");
	is_str(op_kind_name(OP_B), "backward", "B is the full backward");
	return tap_done();
}
