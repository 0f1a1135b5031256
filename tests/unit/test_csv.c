/* test_csv — RFC 4180 records: quotes, doubled quotes, line breaks in fields, CRLF, NUL
 * bytes, and the errors for a quote never closed or text after a closing quote. */
#include "config.h"

#include <string.h>

#include "csv.h"
#include "../tap.h"

/* All records of text as "f1|f2;..." lines joined with '/', or "ERR: msg". */
static void records(const char *text, size_t len, char *out, size_t n)
{
	struct csv c;
	struct err e = ERR_INIT;
	int r;

	out[0] = '\0';
	csv_init(&c, text, len);
	while ((r = csv_next(&c, "t.csv", &e)) > 0) {
		char line[32];

		snprintf(line, sizeof(line), "%ld:", c.line);
		strncat(out, line, n - strlen(out) - 1);
		for (int i = 0; i < c.n; i++) {
			char p[64];

			if (i)
				strncat(out, "|", n - strlen(out) - 1);
			strncat(out, csv_printable(p, sizeof(p), c.f[i].s, c.f[i].len, 40), n - strlen(out) - 1);
		}
		strncat(out, "/", n - strlen(out) - 1);
	}
	if (r < 0)
		snprintf(out, n, "ERR: %s", e.msg);
	csv_release(&c);
}

#define REC(text, want, what) do { \
	char got_[512]; \
	records(text, sizeof(text) - 1, got_, sizeof(got_)); \
	is_str(got_, want, what); \
} while (0)

int main(void)
{
	char p[16];

	REC("", "", "no text, no records");
	REC("a,b,c\n", "1:a|b|c/", "plain fields");
	REC("a,b\nc", "1:a|b/2:c/", "the last line needs no newline");
	REC("a,\n\n,b\n", "1:a|/2:/3:|b/", "empty fields and an empty line");
	REC("a,b\r\nc,d\r\n", "1:a|b/2:c|d/", "CRLF line ends");
	REC("\"x,y\",z\n", "1:x,y|z/", "a comma inside quotes");
	REC("\"say \"\"hi\"\"\",2\n", "1:say \"hi\"|2/", "doubled quotes");
	REC("\"two\nlines\",b\nc\n", "1:two\\nlines|b/3:c/", "a newline inside quotes, and the line count after it");
	REC("\"q\"\r\n\"\"\n", "1:q/2:/", "a quoted field before CRLF, an empty quoted field");
	REC("a\"b,c\n", "1:a\"b|c/", "a quote inside an unquoted field is kept");
	REC("a\0b,c\n", "1:a\\x00b|c/", "a NUL byte is a byte of the field");
	REC("x\n\"open,b\nc\n", "ERR: t.csv: line 2: quoted field is never closed", "a quote never closed");
	REC("\"a\"b,c\n", "ERR: t.csv: line 1: text after the closing quote of a field", "text after a closing quote");
	/* spreadsheets save CSV with a UTF-8 byte order mark: it is not part of the first field */
	REC("\xef\xbb\xbf" "0F0,0I0\n", "1:0F0|0I0/", "a UTF-8 byte order mark is skipped");
	REC("\xef\xbb\xbf" "\"q\",b\n", "1:q|b/", "also before a quoted first field");
	REC("a,\xef\xbb\xbf" "b\n", "1:a|\xef\xbb\xbf" "b/", "but kept anywhere else");
	is_str(csv_printable(p, sizeof(p), "abcdefghijklmnopq", 17, 100), "abcdefghijkl...", "printable cuts to the buffer");
	is_str(csv_printable(p, sizeof(p), "abcdef", 6, 4), "abcd...", "and to the asked length");
	return tap_done();
}
