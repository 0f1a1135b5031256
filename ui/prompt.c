/*
 * prompt — the prompts' line editor (see prompt.h). The line is a byte buffer edited at
 * a cursor; the keys are the shell's (readline's emacs defaults) so nothing new is to be
 * learnt. Completion reads one directory per Tab: cheap enough to need no cache.
 */
#include "config.h"
#include "prompt.h"
#include "keydec.h"
#include "screen.h"

#include <curses.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "datadir.h"

#define CTRL(c) ((c) & 0x1f)

void line_set(struct line *l, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	l->cut = n > LINE_MAX_LEN;
	l->not_utf8 = false;
	l->npend = l->need = 0;
	snprintf(l->buf, sizeof(l->buf), "%s", s ? s : "");
	l->len = l->pos = (int)strlen(l->buf);
}

const char *line_problem(const struct line *l)
{
	if (l->cut)
		return "the text is longer than 4095 bytes and was cut: it is not run (^U clears it)";
	if (l->npend > 0)
		return "the text ends in part of a UTF-8 character: it is not run (type the rest, or Backspace)";
	if (l->not_utf8)
		return "the text held bytes that are no UTF-8 character and were left out: it is not run (^U clears it)";
	return NULL;
}

/* The start of the code point before byte p (p > 0). */
static int cp_before(const struct line *l, int p)
{
	do
		p--;
	while (p > 0 && ((unsigned char)l->buf[p] & 0xc0) == 0x80);
	return p;
}

static int cp_after(const struct line *l, int p)
{
	int n = screen_char_bytes(l->buf + p);

	return p + (n > 0 ? n : 0);
}

/* Whether the code point at p draws in no column (a combining mark): it belongs to the
 * character before it, so the cursor never stops on it. */
static bool zero_width_at(const struct line *l, int p)
{
	return p < l->len && screen_text_cols(l->buf + p, (size_t)(cp_after(l, p) - p)) == 0;
}

/* The start of the character before p, and the end of the one at p: a code point with
 * the combining marks after it. */
static int char_before(const struct line *l, int p)
{
	do
		p = cp_before(l, p);
	while (p > 0 && zero_width_at(l, p));
	return p;
}

static int char_after(const struct line *l, int p)
{
	do
		p = cp_after(l, p);
	while (p < l->len && zero_width_at(l, p));
	return p;
}

void line_view(const struct line *l, int room, int *first, int *cursor_col)
{
	int f = l->pos, cols = 0, cw = l->pos < l->len ? screen_text_cols(l->buf + l->pos, (size_t)(char_after(l, l->pos) - l->pos)) : 1;

	/* back from the cursor while what lies between still leaves its own cell room */
	while (f > 0) {
		int b = char_before(l, f), w = screen_text_cols(l->buf + b, (size_t)(f - b));

		if (cols + w + cw > room)
			break;
		cols += w;
		f = b;
	}
	*first = f;
	*cursor_col = cols;
}

static void delete_range(struct line *l, int from, int to)
{
	if (from < 0)
		from = 0;
	if (to > l->len)
		to = l->len;
	if (from >= to)
		return;
	memmove(l->buf + from, l->buf + to, (size_t)(l->len - to + 1));
	l->len -= to - from;
	if (l->pos > to)
		l->pos -= to - from;
	else if (l->pos > from)
		l->pos = from;
	if (l->len == 0)
		l->cut = l->not_utf8 = false; /* nothing left that is not what was typed */
}

/* Inserts n bytes at the cursor, all or none: a line that cannot take them is cut. */
static void insert_text(struct line *l, const char *s, int n)
{
	if (n > LINE_MAX_LEN - l->len) {
		l->cut = true;
		return;
	}
	if (n <= 0)
		return;
	memmove(l->buf + l->pos + n, l->buf + l->pos, (size_t)(l->len - l->pos + 1));
	memcpy(l->buf + l->pos, s, (size_t)n);
	l->len += n;
	l->pos += n;
}

static void hist_show(struct line *l, struct line_hist *h, int to)
{
	if (to < 0 || to > h->n)
		return;
	if (h->browse == h->n) {
		snprintf(h->typed, sizeof(h->typed), "%s", l->buf);
		h->typed_cut = l->cut;
		h->typed_not_utf8 = l->not_utf8;
	}
	h->browse = to;
	line_set(l, to == h->n ? h->typed : h->items[to]);
	if (to == h->n) { /* the line being typed comes back as it was, losses and all */
		l->cut = h->typed_cut;
		l->not_utf8 = h->typed_not_utf8;
	}
}

/* A byte of a UTF-8 character (0x80..0xff): kept until the character is whole, then
 * inserted; one that starts none, breaks one off or makes a C1 control, an overlong form
 * or a surrogate marks the line. */
static void utf8_byte(struct line *l, unsigned char b)
{
	if ((b & 0xc0) == 0x80 && l->npend > 0) {
		uint32_t cp;

		l->pend[l->npend++] = b;
		if (l->npend < l->need)
			return;
		cp = l->need == 2 ? (uint32_t)(l->pend[0] & 0x1f) << 6 | (l->pend[1] & 0x3f)
		   : l->need == 3 ? (uint32_t)(l->pend[0] & 0x0f) << 12 | (uint32_t)(l->pend[1] & 0x3f) << 6 | (l->pend[2] & 0x3f)
		   : (uint32_t)(l->pend[0] & 0x07) << 18 | (uint32_t)(l->pend[1] & 0x3f) << 12 |
		     (uint32_t)(l->pend[2] & 0x3f) << 6 | (l->pend[3] & 0x3f);
		if (cp < 0xa0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff || (l->need == 3 && cp < 0x800) ||
		    (l->need == 4 && cp < 0x10000))
			l->not_utf8 = true;
		else
			insert_text(l, (const char *)l->pend, l->need);
		l->npend = l->need = 0;
		return;
	}
	if (l->npend > 0)
		l->not_utf8 = true; /* a character broken off */
	l->npend = 0;
	l->need = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
	if (l->need == 0)
		l->not_utf8 = true;
	else
		l->pend[l->npend++] = b;
}

bool line_key(struct line *l, struct line_hist *h, int key)
{
	if (key >= 0x80 && key <= 0xff) {
		utf8_byte(l, (unsigned char)key);
		return true;
	}
	if (l->npend > 0) {
		l->not_utf8 = true; /* a character broken off by another key */
		l->npend = l->need = 0;
	}
	switch (key) {
	case KEY_LEFT: case CTRL('b'): if (l->pos > 0) l->pos = char_before(l, l->pos); return true;
	case KEY_RIGHT: case CTRL('f'): if (l->pos < l->len) l->pos = char_after(l, l->pos); return true;
	case KEY_HOME: case CTRL('a'): l->pos = 0; return true;
	case KEY_END: case CTRL('e'): l->pos = l->len; return true;
	case KEY_BACKSPACE: case 127: case 8: if (l->pos > 0) delete_range(l, char_before(l, l->pos), l->pos); return true;
	case KEY_DC: case CTRL('d'): delete_range(l, l->pos, char_after(l, l->pos)); return true;
	case CTRL('u'): delete_range(l, 0, l->pos); return true;
	case CTRL('k'): delete_range(l, l->pos, l->len); return true;
	case CTRL('w'): {
		/* the word before the cursor, and the blanks after it (readline's unix-word-rubout) */
		int p = l->pos;

		while (p > 0 && l->buf[p - 1] == ' ')
			p--;
		while (p > 0 && l->buf[p - 1] != ' ')
			p--;
		delete_range(l, p, l->pos);
		return true;
	}
	case KEYDEC_CTRL_LEFT:
		/* a word back and on, as ^W counts words: up to a blank */
		while (l->pos > 0 && l->buf[l->pos - 1] == ' ')
			l->pos--;
		while (l->pos > 0 && l->buf[l->pos - 1] != ' ')
			l->pos--;
		return true;
	case KEYDEC_CTRL_RIGHT:
		while (l->pos < l->len && l->buf[l->pos] == ' ')
			l->pos++;
		while (l->pos < l->len && l->buf[l->pos] != ' ')
			l->pos++;
		return true;
	case KEY_UP:
		if (h)
			hist_show(l, h, h->browse - 1);
		return true;
	case KEY_DOWN:
		if (h)
			hist_show(l, h, h->browse + 1);
		return true;
	default:
		if (key >= 32 && key < 127) {
			char c = (char)key;

			insert_text(l, &c, 1);
			return true;
		}
		return false;
	}
}

void line_hist_add(struct line_hist *h, const char *s)
{
	if (*s && !(h->n > 0 && strcmp(h->items[h->n - 1], s) == 0)) {
		char *copy = strdup(s);

		if (copy) {
			if (h->n == LINE_HIST) {
				free(h->items[0]);
				memmove(h->items, h->items + 1, (LINE_HIST - 1) * sizeof(h->items[0]));
				h->n--;
			}
			h->items[h->n++] = copy;
		}
	}
	line_hist_reset(h);
}

void line_hist_reset(struct line_hist *h)
{
	h->browse = h->n;
	h->typed[0] = '\0';
	h->typed_cut = h->typed_not_utf8 = false;
}

void line_hist_release(struct line_hist *h)
{
	for (int i = 0; i < h->n; i++)
		free(h->items[i]);
	memset(h, 0, sizeof(*h));
}

bool line_expand_home(const char *in, char *out, size_t n)
{
	const char *home = getenv("HOME");
	int k;

	if (in[0] == '~' && (in[1] == '/' || in[1] == '\0') && home && *home)
		k = snprintf(out, n, "%s%s", home, in + 1);
	else
		k = snprintf(out, n, "%s", in);
	if (k < 0 || (size_t)k >= n) {
		if (n)
			out[0] = '\0';
		return false;
	}
	return true;
}

const char *line_file_name(const char *in, char *out, size_t n)
{
	char name[LINE_MAX_LEN + 1];
	bool typed = in[0] != '\0';
	size_t len;

	while (*in == ' ' || *in == '\t')
		in++;
	len = strlen(in);
	while (len > 0 && (in[len - 1] == ' ' || in[len - 1] == '\t'))
		len--;
	if (len > LINE_MAX_LEN)
		len = LINE_MAX_LEN;
	memcpy(name, in, len);
	name[len] = '\0';
	if (typed && len == 0) {
		if (n)
			out[0] = '\0';
		return "a name of only spaces is no file name: type one (spaces around a name are dropped)";
	}
	if (!line_expand_home(name, out, n))
		return "the name is too long with ~ expanded: it is not used";
	return NULL;
}

/* ---- questions that fit their line ------------------------------------------------------ */

static int text_cols(const char *s)
{
	return s ? screen_text_cols(s, strlen(s)) : 0;
}

/* The bytes of s's longest start of at most cols columns (whole characters). */
static size_t head_bytes(const char *s, int cols)
{
	size_t k = 0;

	for (;;) {
		int b = screen_char_bytes(s + k);

		if (b == 0 || screen_text_cols(s, k + (size_t)b) > cols)
			return k;
		k += (size_t)b;
	}
}

/* Appends s to out (n bytes, holding *len), kept within cols columns: whole, or its start
 * and "..." (mid: its start, "..." and its end, the end the longer: a path's file name is
 * what tells it). */
static void put_fit(char *out, size_t n, size_t *len, const char *s, int cols, bool mid)
{
	size_t k = strlen(s);
	const char *end = "";

	if (text_cols(s) > cols && cols < 4) {
		k = head_bytes(s, cols);
	} else if (text_cols(s) > cols) {
		int keep = cols - 3, tail = mid ? keep * 2 / 3 : 0, rest;

		k = head_bytes(s, keep - tail);
		end = s + k;
		rest = text_cols(end);
		/* the end: the longest suffix of whole characters within tail columns */
		while (*end && rest > tail) {
			int b = screen_char_bytes(end);

			rest -= screen_text_cols(end, (size_t)b);
			end += b;
		}
	}
	snprintf(out + *len, n - *len, "%.*s%s%s", (int)k, s, k < strlen(s) && cols >= 4 ? "..." : "", end);
	*len += strlen(out + *len);
}

void prompt_question(char *out, size_t n, int w, const char *head, const char *path, const char *tail,
                     const char *answers, const char *keys)
{
	enum { PATH_MIN = 16, QUESTION_MIN = 30 };
	const char *ans[2] = { answers, keys };
	int hc = text_cols(head), tc = text_cols(tail), pc = text_cols(path);

	if (!n)
		return;
	for (int v = 0; v < 2; v++) {
		int room = w - text_cols(ans[v]);   /* for the question */
		size_t len = 0;

		out[0] = '\0';
		/* the answers in words, unless they leave the question too little room */
		if (room < (v == 1 ? 1 : hc + pc + tc < QUESTION_MIN ? hc + pc + tc : QUESTION_MIN))
			continue;
		put_fit(out, n, &len, head, room, false);
		if (hc + pc + tc <= room) {
			put_fit(out, n, &len, path ? path : "", pc, false);
			put_fit(out, n, &len, tail, tc, false);
		} else if (path && room - hc - tc >= PATH_MIN) {
			put_fit(out, n, &len, path, room - hc - tc, true);
			put_fit(out, n, &len, tail, tc, false);
		} else {
			/* the path at its shortest, then the question cut at its end */
			char q[LINE_MAX_LEN + 1];
			size_t ql = 0;

			len = 0;
			put_fit(q, sizeof(q), &ql, head, hc, false);
			if (path)
				put_fit(q, sizeof(q), &ql, path, pc < PATH_MIN ? pc : PATH_MIN, true);
			put_fit(q, sizeof(q), &ql, tail, tc, false);
			if (text_cols(q) <= room) {
				put_fit(out, n, &len, q, room, false);
			} else {
				put_fit(out, n, &len, q, room - 1, false);
				put_fit(out, n, &len, " ", 1, false);
			}
		}
		put_fit(out, n, &len, ans[v], text_cols(ans[v]), false);
		return;
	}
	{
		size_t len = 0;

		out[0] = '\0';
		put_fit(out, n, &len, keys, w, false);
	}
}

/* Whether s is UTF-8 with no C1 control, overlong form or surrogate (utf8_byte's rules). */
static bool utf8_valid(const char *s)
{
	struct line t;

	memset(&t, 0, sizeof(t));
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			utf8_byte(&t, (unsigned char)*s);
		else if (t.npend > 0)
			return false;
	return !t.not_utf8 && t.npend == 0 && !t.cut;
}

struct matches {
	char names[64][256];
	int n, total;
	char common[256];
};

static void add_match(struct matches *m, const char *name)
{
	if (m->total++ == 0) {
		snprintf(m->common, sizeof(m->common), "%s", name);
	} else {
		size_t k = 0;

		while (m->common[k] && m->common[k] == name[k])
			k++;
		m->common[k] = '\0';
	}
	if (m->n < 64)
		snprintf(m->names[m->n++], sizeof(m->names[0]), "%s", name);
}

/* The entries of dir starting with base (a directory's name with its '/'). */
static void dir_matches(const char *dir, const char *base, bool json_only, bool strip_json, struct matches *m)
{
	DIR *d = opendir(dir[0] ? dir : ".");
	struct dirent *e;
	size_t bl = strlen(base);

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char name[256], full[4096];
		struct stat st;
		size_t nl = strlen(e->d_name);
		bool is_dir;

		if (strncmp(e->d_name, base, bl) != 0 || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_name[0] == '.' && base[0] != '.')
			continue;
		snprintf(full, sizeof(full), "%s%s", dir[0] ? dir : "./", e->d_name);
		is_dir = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
		if (json_only && (is_dir || nl < 5 || strcmp(e->d_name + nl - 5, ".json") != 0))
			continue;
		snprintf(name, sizeof(name), "%.*s%s", (int)(strip_json ? nl - 5 : nl), e->d_name, is_dir ? "/" : "");
		add_match(m, name);
	}
	closedir(d);
}

int line_complete(struct line *l, const char *subdir, char *msg, size_t n)
{
	char word[LINE_MAX_LEN + 1], path[4096], dir[4096];
	const char *slash;
	struct matches *m = calloc(1, sizeof(*m));
	int start = l->pos, count;

	if (!m) {
		snprintf(msg, n, "out of memory");
		return 0;
	}
	/* the word before the cursor (paths here have no blanks) */
	while (start > 0 && l->buf[start - 1] != ' ')
		start--;
	snprintf(word, sizeof(word), "%.*s", l->pos - start, l->buf + start);
	line_expand_home(word, path, sizeof(path));
	slash = strrchr(path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path + 1) : 0, path);
	dir_matches(dir, slash ? slash + 1 : path, false, false, m);
	if (subdir && !strchr(word, '/')) {
		const char *dd = datadir_find(NULL);

		if (dd) {
			snprintf(dir, sizeof(dir), "%s/%s/", dd, subdir);
			dir_matches(dir, word, true, true, m);
		}
	}
	count = m->total;
	if (count == 0) {
		snprintf(msg, n, "no file matches '%s'", word);
	} else {
		/* replace the word by its expansion up to the last '/', plus the common part */
		char repl[4096];
		const char *base = slash ? slash + 1 : path;

		snprintf(repl, sizeof(repl), "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, m->common);
		if (strlen(m->common) >= strlen(base) || strcmp(word, path) != 0) {
			delete_range(l, start, l->pos);
			insert_text(l, repl, (int)strlen(repl));
			/* a file name is bytes: one that is no UTF-8 marks the line, as typed ones do */
			if (!utf8_valid(repl))
				l->not_utf8 = true;
		}
		if (count == 1) {
			snprintf(msg, n, "%s", m->names[0]);
		} else {
			size_t k = (size_t)snprintf(msg, n, "%d matches:", count);

			for (int i = 0; i < m->n && k + 2 < n; i++)
				k += (size_t)snprintf(msg + k, n - k, " %s", m->names[i]);
		}
	}
	free(m);
	return count;
}
