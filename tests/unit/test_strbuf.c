/* test_strbuf — the text buffer grows, formats, pads and hands over its string; byte
 * sizes that would read alike are written apart. */
#include "config.h"

#include <stdlib.h>

#include "doc.h"
#include "strbuf.h"
#include "../tap.h"

/* str_fit_middle: short text whole; long text its first third, " ... ", its end, never
 * a UTF-8 character cut. */
static void fit_middle(void)
{
	char out[21], text[200];

	str_fit_middle(out, sizeof(out), "short", 5);
	is_str(out, "short", "text that fits is copied whole");
	for (int i = 0; i < 100; i++)
		text[i] = (char)('a' + i % 26);
	memcpy(text + 100, ": the reason", 13);
	str_fit_middle(out, sizeof(out), text, strlen(text));
	is_int((long)strlen(out), 20, "a long text fills the buffer exactly");
	ok(strncmp(out, "abcdef", 6) == 0 && strstr(out, " ... ") && strcmp(out + 20 - 9, "he reason") == 0,
	   "and keeps its start, a marker and its end: '%s'", out);
	/* a two-byte character across the cut: the head ends before it */
	memcpy(text, "abcde\xc3\xa9", 7);
	str_fit_middle(out, sizeof(out), text, strlen(text));
	ok(strncmp(out, "abcde ... ", 10) == 0 || strncmp(out, "abcde\xc3\xa9", 7) == 0, "no character cut in two: '%s'",
	   out);
}

/* A derived name keeps its suffix and cuts its base between characters. */
static void name_with_suffix(void)
{
	char *s = str_name_with_suffix("ab\xc3\xa9", " x", 4); /* "ab" + e-acute (2 bytes) */

	is_str(s, "ab x", "the base is cut before a character that does not fit whole");
	free(s);
	s = str_name_with_suffix("ab\xc3\xa9", " x", 6);
	is_str(s, "ab\xc3\xa9 x", "and kept whole when it fits");
	free(s);
	s = str_name_with_suffix("abc", " tuned", 3);
	is_str(s, " tu", "a suffix longer than the room is all that is kept, cut");
	free(s);
	ok(str_is_utf8("a\xc3\xa9", 3) && !str_is_utf8("a\xc3", 2) && !str_is_utf8("\xff", 1),
	   "str_is_utf8 tells whole characters from cut ones and stray bytes");
}

int main(void)
{
	fit_middle();
	name_with_suffix();
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

	{
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		strbuf_addstr(&a, "peak ");
		fmt_bytes_apart(&a, &b, 134.30e9, 133.95e9);
		is_str(a.buf, "peak 134.30 GB", "134.30 GB and 133.95 GB, which read 134 GB alike, get two decimals");
		is_str(b.buf, "133.95 GB", "both of them");
		strbuf_reset(&a);
		strbuf_reset(&b);
		fmt_bytes_apart(&a, &b, 76.0004e9, 76.0e9);
		is_str(a.buf, "76.0004 GB", "as many as tell them apart");
		is_str(b.buf, "76.0000 GB", "the same for the other");
		strbuf_reset(&a);
		strbuf_reset(&b);
		fmt_bytes_apart(&a, &b, 120e9, 134e9);
		is_str(a.buf, "120 GB", "sizes that read apart stay as fmt_bytes writes them");
		strbuf_reset(&a);
		strbuf_reset(&b);
		fmt_bytes_apart(&a, &b, 134e9, 134e9);
		is_str(a.buf, "134 GB", "equal sizes too");
		is_int(fmt_gb_decimals(76.04e9, 76.0e9, 1), 2, "76.04 of 76.00 GB: two decimals where one reads 76.0 alike");
		is_int(fmt_gb_decimals(153e9, 133.9e9, 1), 1, "sizes apart at one decimal keep one");
		is_int(fmt_gb_decimals(5e9, 5e9, 1), 1, "equal sizes keep the least");
		strbuf_release(&a);
		strbuf_release(&b);
	}
	{
		struct strbuf a = STRBUF_INIT;
		const char *name = "id\xe2\x80\xaegnp.json \xd8\x9c\xe2\x81\xa6x\xe2\x81\xa9 \xc3\xa9";

		strbuf_add_printable(&a, name, strlen(name), false);
		is_str(a.buf, "id\\u202egnp.json \\u061c\\u2066x\\u2069 \xc3\xa9",
		       "characters that reorder text print escaped, other UTF-8 as is");
		ok(utf8_reorders(0x200e) && utf8_reorders(0x202a) && !utf8_reorders(0x2029) && !utf8_reorders(0x202f) &&
		   !utf8_reorders(0x2065) && !utf8_reorders(0x206a), "utf8_reorders: the class's ends, not its neighbours");
		strbuf_release(&a);
	}
	return tap_done();
}
