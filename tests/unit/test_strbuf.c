/* test_strbuf — the text buffer grows, formats, pads and hands over its string. */
#include "config.h"

#include <stdlib.h>

#include "strbuf.h"
#include "../tap.h"

int main(void)
{
	struct strbuf sb = STRBUF_INIT;
	char *s;

	is_str(sb.buf, "", "a new buffer is the empty string");
	strbuf_addstr(&sb, "abc");
	strbuf_addch(&sb, '-');
	strbuf_addf(&sb, "%d/%s", 42, "x");
	is_str(sb.buf, "abc-42/x", "add, addch and addf append");
	is_int(sb.len, 8, "len follows the content");
	strbuf_pad(&sb, '.', 3);
	is_str(sb.buf, "abc-42/x...", "pad appends copies of a character");
	strbuf_truncate(&sb, 3);
	is_str(sb.buf, "abc", "truncate shortens");
	for (int i = 0; i < 10000; i++)
		strbuf_addch(&sb, 'z');
	is_int(sb.len, 10003, "appending one byte at a time grows the buffer");
	ok(!strbuf_failed(&sb), "no allocation failed");
	strbuf_reset(&sb);
	is_str(sb.buf, "", "reset empties");
	strbuf_addstr(&sb, "mine");
	s = strbuf_detach(&sb);
	is_str(s, "mine", "detach hands over the string");
	is_str(sb.buf, "", "and leaves the buffer empty");
	free(s);
	s = strbuf_detach(&sb);
	is_str(s, "", "detaching an empty buffer gives an empty heap string");
	free(s);
	strbuf_release(&sb);
	return tap_done();
}
