/*
 * test_keydec — the UI's key decoder (ui/keydec.c): known keys in every spelling mean
 * their key, also when their bytes come in pieces; and a fuzz of byte streams made of
 * what is not a key (unknown CSI and SS3 sequences, bracketed pastes of any bytes, X10
 * and SGR mouse reports, sequences cut short by a pause), fed byte by byte, never yields
 * a key bound to an edit, a run, a save or a quit. A paste's text comes back as text,
 * byte for byte; with the mouse off no mouse report comes out at all.
 */
#include "config.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keydec.h"
#include "keys.h"
#include "../tap.h"

/* A key bound to a command that changes something: an edit, a file written, a run, a
 * quit, an adoption or the tuner. */
static bool acts(int key)
{
	enum cmd c = keys_lookup(key);
	const struct command *k = keys_command(c);

	if (c == CMD_NONE || !k)
		return false;
	return strcmp(k->group, "edit") == 0 || strcmp(k->group, "files") == 0 || strcmp(k->group, "run") == 0 ||
	       c == CMD_ADOPT || c == CMD_QUIT || c == CMD_STEPS;
}

struct tally {
	int keys, acting, mouse, drops, pastes, paste_ends;
	int replies, alts;      /* drops of terminals' replies, of Alt chords */
	int not_esc;            /* keys other than Esc */
	int key[8];
	char text[512];
	int ntext;
};

static void drain(struct keydec *d, struct tally *t)
{
	struct kev ev;

	while (keydec_next(d, &ev)) {
		switch (ev.kind) {
		case KEV_KEY:
			if (t->keys < 8)
				t->key[t->keys] = ev.key;
			t->keys++;
			if (ev.key != 27)
				t->not_esc++;
			if (acts(ev.key))
				t->acting++;
			break;
		case KEV_PASTE:
			if (t->ntext < (int)sizeof(t->text))
				t->text[t->ntext++] = (char)ev.key;
			t->pastes++;
			break;
		case KEV_PASTE_END: t->paste_ends++; break;
		case KEV_MOUSE: t->mouse++; break;
		case KEV_DROP:
			t->drops++;
			t->replies += ev.drop == KEV_DROP_REPLY;
			t->alts += ev.drop == KEV_DROP_ALT;
			break;
		}
	}
}

/* Decodes n bytes in one go (then a pause when pause is set) with a fresh decoder. */
static struct tally decode(const char *s, size_t n, bool mouse, bool pause)
{
	struct keydec d;
	struct tally t;

	memset(&t, 0, sizeof(t));
	keydec_init(&d, mouse);
	for (size_t i = 0; i < n; i++) {
		keydec_feed(&d, (unsigned char)s[i]);
		drain(&d, &t);
	}
	if (pause) {
		keydec_timeout(&d);
		drain(&d, &t);
	}
	return t;
}

/* a, then the input running dry (keydec_idle), then b and a pause: typed apart. */
static struct tally decode_apart(const char *a, const char *b)
{
	struct keydec d;
	struct tally t;

	memset(&t, 0, sizeof(t));
	keydec_init(&d, false);
	for (; *a; a++)
		keydec_feed(&d, (unsigned char)*a);
	drain(&d, &t);
	keydec_idle(&d);
	for (; *b; b++)
		keydec_feed(&d, (unsigned char)*b);
	keydec_timeout(&d);
	drain(&d, &t);
	return t;
}

static void known(const char *seq, int key, const char *what)
{
	struct tally t = decode(seq, strlen(seq), false, true);

	ok(t.keys == 1 && t.key[0] == key && t.drops == 0, "%s means its key", what);
}

static void dropped(const char *seq, const char *what)
{
	struct tally t = decode(seq, strlen(seq), false, true);

	ok(t.keys == 0 && t.drops == 1, "%s is dropped whole", what);
}

static void known_keys(void)
{
	known("\033[A", KEY_UP, "CSI A");
	known("\033OB", KEY_DOWN, "SS3 B");
	known("\033[1~", KEY_HOME, "PuTTY's Home");
	known("\033[4~", KEY_END, "PuTTY's End");
	known("\033[17~", KEY_F(6), "F6");
	known("\033OP", KEY_F(1), "SS3 F1");
	known("\033[11~", KEY_F(1), "PuTTY's F1");
	known("\033[[A", KEY_F(1), "the linux console's F1");
	known("\033[1;2C", KEY_SRIGHT, "Shift-Right");
	known("\033[1;5D", KEYDEC_CTRL_LEFT, "Ctrl-Left");
	known("\033[1;2R", KEY_F(15), "xterm's Shift-F3");
	known("\033O2R", KEY_F(15), "an older terminal's Shift-F3 (SS3 with a modifier)");
	known("\033[13;2~", KEY_F(15), "Shift-F3 as CSI 13;2~");
	known("\033[3~", KEY_DC, "Delete");
	known("\033", 27, "a lone Esc (after a pause)");
	known("q", 'q', "a plain key");
	dropped("\033[99~", "an unknown CSI ~ key");
	dropped("\033[3;7y", "a CSI sequence with parameters");
	dropped("\033Ox", "an unknown SS3 key");
	dropped("\033[1;3A", "Alt-Up (no command)");
	dropped("\033[?1;2c", "a terminal's answer (DA)");
	dropped("\033[1", "a CSI cut short by a pause");
	{
		struct tally t = decode("\033O2R", sizeof("\033O2R") - 1, false, true);

		ok(t.acting == 0, "ESC O 2 R does not start a run (issue 28)");
		t = decode("\033[M ]]", sizeof("\033[M ]]") - 1, false, true);
		ok(t.keys == 0 && t.mouse == 0, "an X10 mouse report with the mouse off: no key, no event");
		t = decode("\033[M ]]", sizeof("\033[M ]]") - 1, true, true);
		ok(t.keys == 0 && t.mouse == 1, "with the mouse on: one click");
		t = decode("\033[<0;10;5M\033[<0;10;5m", sizeof("\033[<0;10;5M\033[<0;10;5m") - 1, true, true);
		ok(t.keys == 0 && t.mouse == 1, "an SGR click (press and release): one click");
		t = decode("\033[<64;3;3M", sizeof("\033[<64;3;3M") - 1, false, true);
		ok(t.keys == 0 && t.mouse == 0 && t.drops == 0, "an SGR wheel with the mouse off: nothing");
		t = decode("\033[200~]]Rp\033[201~", sizeof("\033[200~]]Rp\033[201~") - 1, false, true);
		ok(t.keys == 0 && t.pastes == 4 && t.paste_ends == 1 && memcmp(t.text, "]]Rp", 4) == 0,
		   "a bracketed paste is text, not keys");
		t = decode("\033[200~a\033[20b\033[201~", sizeof("\033[200~a\033[20b\033[201~") - 1, false, true);
		ok(t.keys == 0 && t.ntext == 6 && memcmp(t.text, "a\033[20b", 6) == 0,
		   "a paste holding the start of its end marker keeps those bytes as text");
		t = decode("\033/", sizeof("\033/") - 1, false, true);
		ok(t.keys == 0 && t.alts == 1, "ESC and a key in one read (Alt-/) are an Alt chord, dropped: no key");
		t = decode("\033q", sizeof("\033q") - 1, false, true);
		ok(t.keys == 0 && t.alts == 1 && t.acting == 0, "Alt-q does not quit");
		t = decode("\033\346\227\245x", sizeof("\033\346\227\245x") - 1, false, true);
		ok(t.keys == 1 && t.key[0] == 'x' && t.alts == 1, "Alt and a non-ASCII key: the chord dropped whole, its "
		   "character's bytes too");
		t = decode_apart("\033", "q");
		ok(t.keys == 2 && t.key[0] == 27 && t.key[1] == 'q', "Esc, then q typed apart: Esc, then q");
		t = decode_apart("\033", "[A");
		ok(t.keys == 1 && t.key[0] == KEY_UP, "an arrow's ESC read apart from its rest is still the arrow");
		t = decode("\033[12;40R", sizeof("\033[12;40R") - 1, false, true);
		ok(t.keys == 0 && t.replies == 1, "a cursor position report is a reply, dropped without a word");
		t = decode("\033[?1;2c\033[I\033[O\033[0n", sizeof("\033[?1;2c\033[I\033[O\033[0n") - 1, false, true);
		ok(t.keys == 0 && t.replies == 4, "device attributes, focus in and out, a status report: replies");
		t = decode("\033[99~", sizeof("\033[99~") - 1, false, true);
		ok(t.drops == 1 && t.replies == 0 && t.alts == 0, "an unknown key is neither (the UI says so)");
		t = decode("\033]11;rgb:1c1c/1c1c/1c1c\033\\", sizeof("\033]11;rgb:1c1c/1c1c/1c1c\033\\") - 1, false, true);
		ok(t.keys == 0 && t.drops == 1 && t.replies == 1, "an OSC colour reply ended by ST is one dropped string, no key of it");
		t = decode("\033]0;title]]w\007q", sizeof("\033]0;title]]w\007q") - 1, false, true);
		ok(t.keys == 1 && t.key[0] == 'q' && t.drops == 1, "an OSC ended by BEL: dropped, and the key after it is a key");
		t = decode("\033P1$r0m\033\\", sizeof("\033P1$r0m\033\\") - 1, false, true);
		ok(t.keys == 0 && t.drops == 1, "a DCS reply is one dropped string");
		t = decode("\033]52;[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]\033\\w",
		           sizeof("\033]52;[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]\033\\w") - 1, false, true);
		ok(t.keys == 1 && t.key[0] == 'w' && t.drops == 1, "a string longer than the buffer still ends at its ST");
		t = decode("\033]x", sizeof("\033]x") - 1, false, true);
		ok(t.keys == 1 && t.key[0] == 'x' && t.alts == 1,
		   "ESC ] in one read and a key that is no parameter: Alt-] dropped, then the key");
		t = decode("\033]", sizeof("\033]") - 1, false, true);
		ok(t.keys == 0 && t.alts == 1, "ESC ] in one read and nothing after it: Alt-], dropped (no edit)");
		t = decode_apart("\033", "]x");
		ok(t.keys == 3 && t.key[0] == 27 && t.key[1] == ']' && t.key[2] == 'x',
		   "Esc typed apart, then ] and a key that is no parameter: Esc, ] and the key, as typed");
		t = decode_apart("\033]", "x");
		ok(t.keys == 1 && t.key[0] == 'x' && t.alts == 1, "Alt-] then a key typed apart: the chord dropped, the key kept");
	}
	/* split across reads: the decoder keeps its state between pieces */
	{
		struct keydec d;
		struct tally t;

		memset(&t, 0, sizeof(t));
		keydec_init(&d, false);
		keydec_feed(&d, 27);
		drain(&d, &t);
		ok(keydec_wait_ms(&d) == KEYDEC_SEQ_MS, "after an ESC the decoder waits for the rest");
		keydec_feed(&d, '[');
		keydec_feed(&d, '1');
		drain(&d, &t);
		keydec_feed(&d, '9');
		keydec_feed(&d, '~');
		drain(&d, &t);
		ok(t.keys == 1 && t.key[0] == KEY_F(8) && keydec_wait_ms(&d) == -1, "F8 in three pieces is F8");
	}
}

/* A paste that pauses longer than KEYDEC_PASTE_MS (a slow link): what came before the pause
 * ends as a paste, and what comes after it up to the end marker is paste text too, never
 * keys (it was "ab", a pause, then "wq": w saved and q quit). */
static void paused_paste(void)
{
	struct keydec d;
	struct tally t;
	const char *rest = "wq\033[201~x";

	memset(&t, 0, sizeof(t));
	keydec_init(&d, false);
	for (const char *c = "\033[200~ab"; *c; c++)
		keydec_feed(&d, (unsigned char)*c);
	drain(&d, &t);
	ok(keydec_wait_ms(&d) == KEYDEC_PASTE_MS, "inside a paste the decoder waits KEYDEC_PASTE_MS for more");
	keydec_timeout(&d);
	drain(&d, &t);
	ok(t.paste_ends == 1 && t.ntext == 2 && keydec_wait_ms(&d) == KEYDEC_PASTE_MAX_MS,
	   "a paused paste ends its text so far and waits for its end marker up to KEYDEC_PASTE_MAX_MS after its start");
	for (const char *c = rest; *c; c++)
		keydec_feed(&d, (unsigned char)*c);
	keydec_idle(&d);        /* the x after the end marker is held until the read ran dry */
	drain(&d, &t);
	ok(t.keys == 1 && t.key[0] == 'x' && t.ntext == 4 && memcmp(t.text, "abwq", 4) == 0 && t.paste_ends == 2,
	   "the bytes after the pause are paste text up to the end marker; the key after it is a key");
	memset(&t, 0, sizeof(t));
	keydec_init(&d, false);
	for (const char *c = "\033[200~ab"; *c; c++)
		keydec_feed(&d, (unsigned char)*c);
	keydec_timeout(&d);
	keydec_timeout(&d);     /* and no end marker ever came */
	keydec_feed(&d, 'q');
	drain(&d, &t);
	ok(t.keys == 1 && t.key[0] == 'q' && keydec_wait_ms(&d) == -1,
	   "an end marker lost for KEYDEC_PASTE_MAX_MS: keys are keys again");
}

/* A stray paste start (ESC [ 200 ~ and no end) and a key typed every 400 ms after it, the
 * caller's loop as tui.c runs it on a clock of its own: the paste is over
 * KEYDEC_PASTE_MAX_MS after its start, however many keys came (each key restarted the
 * wait: keys never acted again while they kept coming), and the next key acts. */
static void stray_paste_start(void)
{
	struct keydec d;
	struct tally t;
	long long now, last = 0, first_key = -1;
	int lost = 0;

	memset(&t, 0, sizeof(t));
	keydec_init(&d, false);
	keydec_clock(&d, 0);
	for (const char *c = "\033[200~"; *c; c++)
		keydec_feed(&d, (unsigned char)*c);
	keydec_idle(&d);
	drain(&d, &t);
	for (now = 10; now < 4 * KEYDEC_PASTE_MAX_MS && first_key < 0; now += 10) {
		struct kev ev;

		keydec_clock(&d, now);
		if (now % 400 == 0) {
			keydec_feed(&d, 'l');
			keydec_idle(&d);
			last = now;
		}
		if (keydec_wait_ms(&d) >= 0 && now - last >= keydec_wait_ms(&d))
			keydec_timeout(&d);
		while (keydec_next(&d, &ev)) {
			if (ev.kind == KEV_PASTE_END && ev.lost)
				lost++;
			if (ev.kind == KEV_KEY && first_key < 0)
				first_key = now;
		}
	}
	ok(lost == 1, "a paste start without its end is ended, said as lost (%d)", lost);
	ok(first_key > KEYDEC_PASTE_MAX_MS && first_key <= KEYDEC_PASTE_MAX_MS + 400,
	   "and the first key after KEYDEC_PASTE_MAX_MS from its start acts, though a key came every 400 ms "
	   "(at %lld ms)", first_key);
}

/* Decodes each of the strings as one read: the read runs dry after each (keydec_idle),
 * the next comes before the decoder's timeout; then a pause. */
static struct tally reads(const char *const *r)
{
	struct keydec d;
	struct tally t;

	memset(&t, 0, sizeof(t));
	keydec_init(&d, false);
	for (; *r; r++) {
		for (const char *s = *r; *s; s++) {
			keydec_feed(&d, (unsigned char)*s);
			drain(&d, &t);
		}
		keydec_idle(&d);
		drain(&d, &t);
	}
	keydec_timeout(&d);
	drain(&d, &t);
	return t;
}

/* Decodes s as one read (then the read runs dry, then a pause). */
static struct tally one_read(const char *s)
{
	const char *const r[] = { s, NULL };

	return reads(r);
}

/* The bytes after a paste's end marker in the same read: a paste whose text held an end
 * marker (the terminal's own end marker after them) is text to its last marker, never
 * keys (v opened the compare view, w saved); typed keys, without a marker after them, are
 * keys; more than KEYDEC_HOLD_MAX bytes are taken as pasted. */
static void after_paste_end(void)
{
	struct tally t = one_read("\033[200~abc\033[201~v\033[201~");
	char many[200];

	ok(t.keys == 0 && t.ntext == 4 && memcmp(t.text, "abcv", 4) == 0 && t.paste_ends == 2,
	   "text after an end marker held in a paste is paste text up to the terminal's end marker");
	t = one_read("\033[200~x\033[201~wq\033[A\033[201~");
	ok(t.keys == 0 && t.acting == 0, "its keys and sequences neither (wq, an arrow)");
	t = one_read("\033[200~A\033[201~\033[200~B\033[201~");
	ok(t.keys == 0 && t.ntext == 2 && memcmp(t.text, "AB", 2) == 0, "two pastes in one read: both texts, no marker");
	t = one_read("\033[200~abc\033[201~l\033[A");
	ok(t.keys == 2 && t.key[0] == 'l' && t.key[1] == KEY_UP && t.ntext == 3,
	   "keys after a paste in the same read, with no end marker after them, are keys");
	snprintf(many, sizeof(many), "\033[200~a\033[201~%0*d", KEYDEC_HOLD_MAX + 10, 0);
	t = one_read(many);
	ok(t.keys == 0 && t.ntext == 1 + KEYDEC_HOLD_MAX + 10, "more than KEYDEC_HOLD_MAX bytes after it: pasted");
}

/* The read ran dry right after an end marker that was pasted text: what the next read
 * brings before the terminal's end marker is paste text still, never keys (w saved, q
 * quit); a key typed after a paste acts, whether before the decoder's timeout or after. */
static void end_marker_at_read_boundary(void)
{
	static const char *const split[] = { "\033[200~abc\033[201~", "wq\033[201~", NULL };
	static const char *const typed[] = { "\033[200~abc\033[201~", "l", NULL };
	struct tally t = reads(split);

	ok(t.keys == 0 && t.acting == 0 && t.ntext == 5 && memcmp(t.text, "abcwq", 5) == 0,
	   "bytes after an end marker that ended a read are paste text up to the next marker (%d keys)", t.keys);
	t = reads(typed);
	ok(t.keys == 1 && t.key[0] == 'l' && t.ntext == 3, "a key typed right after a paste is a key");
}

/* ---- the fuzz ------------------------------------------------------------------------- */

static unsigned long long rng;

static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(rng >> 33) % n;
}

struct seg {
	char b[512];
	size_t n;
	bool pause;     /* a pause follows (the sequence was cut short) */
};

static void add(struct seg *s, const char *t, size_t n)
{
	for (size_t i = 0; i < n && s->n < sizeof(s->b); i++)
		s->b[s->n++] = t[i];
}

static void addf(struct seg *s, const char *fmt, unsigned a, unsigned b, unsigned c)
{
	char t[64];
	int n = snprintf(t, sizeof(t), fmt, a, b, c);

	add(s, t, (size_t)n);
}

/* One piece of input that is not a key: an unknown or modified sequence, a paste, a mouse
 * report, or any of them cut short by a pause. */
static void noise(struct seg *s, bool mouse)
{
	static const char pchars[] = "0123456789;:<=>? !\"#$%&'()*+,-./";
	unsigned kind = rnd(6);

	s->n = 0;
	s->pause = false;
	switch (kind) {
	case 0:         /* CSI: parameters, intermediates, a final byte */
		add(s, "\033[", 2);
		for (unsigned i = rnd(9); i > 0; i--)
			add(s, &pchars[rnd(sizeof(pchars) - 1)], 1);
		s->b[s->n++] = (char)(0x40 + rnd(0x3f));
		break;
	case 1:         /* SS3, with a modifier or not */
		add(s, "\033O", 2);
		for (unsigned i = rnd(3); i > 0; i--)
			add(s, &"0123456789;"[rnd(11)], 1);
		s->b[s->n++] = (char)(0x40 + rnd(0x3f));
		break;
	case 2: {       /* a paste of any bytes (but its own end marker) */
		add(s, "\033[200~", 6);
		for (unsigned i = rnd(60); i > 0; i--) {
			char c = (char)rnd(256);

			if (rnd(8) == 0)
				add(s, "\033[201", 5);      /* most of the end marker, then text */
			add(s, &c, 1);
			if (s->n >= 6 && memcmp(s->b + s->n - 6, "\033[201~", 6) == 0)
				s->b[s->n - 1] = 'x';
		}
		add(s, "\033[201~", 6);
		break;
	}
	case 3: {       /* an X10 mouse report: three bytes of any value from 32 */
		char r[3] = { (char)(32 + rnd(224)), (char)(32 + rnd(224)), (char)(32 + rnd(224)) };

		add(s, "\033[M", 3);
		add(s, r, 3);
		break;
	}
	case 4:         /* an SGR mouse report */
		addf(s, "\033[<%u;%u;%u", rnd(128), rnd(400), rnd(300));
		add(s, rnd(2) ? "M" : "m", 1);
		break;
	default: {      /* any of them cut short, then a pause */
		struct seg whole;

		do
			noise(&whole, mouse);
		while (whole.pause);
		s->n = 1 + rnd((unsigned)whole.n - 1);
		memcpy(s->b, whole.b, s->n);
		s->pause = true;
		break;
	}
	}
}

static void fuzz(void)
{
	long acting = 0, mice_off = 0, streams = 0, segments = 0, pasted_bad = 0, rejected = 0;

	for (unsigned seed = 1; seed <= 3000; seed++) {
		bool mouse = seed % 2 == 0;
		struct keydec d;
		struct tally t;

		rng = seed;
		keydec_init(&d, mouse);
		memset(&t, 0, sizeof(t));
		for (int k = 0; k < 40; k++) {
			struct seg s;
			struct tally alone;

			noise(&s, mouse);
			alone = decode(s.b, s.n, mouse, true);
			if (alone.keys > 0 && !s.pause) {
				/* a random sequence that is a real key (CSI 19~ is F8): not noise */
				rejected++;
				continue;
			}
			if (alone.pastes > 0 && alone.paste_ends != 1)
				pasted_bad++;
			if (!s.pause && s.b[1] == '[' && s.n > 12 && memcmp(s.b, "\033[200~", 6) == 0 &&
			    (alone.ntext != (int)s.n - 12 || memcmp(alone.text, s.b + 6, s.n - 12) != 0))
				pasted_bad++;
			for (size_t i = 0; i < s.n; i++) {
				keydec_feed(&d, (unsigned char)s.b[i]);
				drain(&d, &t);
			}
			if (s.pause) {
				keydec_timeout(&d);
				drain(&d, &t);
			}
			segments++;
		}
		keydec_timeout(&d);
		drain(&d, &t);
		streams++;
		/* the only key a stream of non-keys may give is Esc: an ESC cut short by a pause */
		acting += t.not_esc + t.acting;
		if (!mouse)
			mice_off += t.mouse;
	}
	ok(acting == 0, "%ld streams of %ld pieces that are no keys: no key that acts (%ld acted)", streams, segments,
	   acting);
	ok(mice_off == 0, "with the mouse off no mouse event came out (%ld did)", mice_off);
	ok(pasted_bad == 0, "every paste came back as text, byte for byte, and ended once (%ld did not)", pasted_bad);
	ok(rejected < segments / 4, "the fuzz mostly made non-keys (%ld random sequences were real keys)", rejected);
}

/* A paste holding end markers followed by any bytes, then the terminal's end marker, in one
 * read: never a key, whatever the bytes. */
static void fuzz_embedded_end(void)
{
	long keys = 0, runs = 0;

	for (unsigned seed = 1; seed <= 2000; seed++) {
		char b[400];
		size_t n = 0;
		struct tally t;

		rng = seed;
		memcpy(b + n, "\033[200~", 6);
		n += 6;
		for (unsigned parts = 1 + rnd(3); parts > 0; parts--) {
			for (unsigned i = rnd(8); i > 0; i--)
				b[n++] = (char)(1 + rnd(255));
			memcpy(b + n, "\033[201~", 6);
			n += 6;
			for (unsigned i = rnd(2 * KEYDEC_HOLD_MAX); i > 0; i--)
				b[n++] = (char)(1 + rnd(255));
		}
		memcpy(b + n, "\033[201~", 6);
		n += 6;
		b[n] = '\0';
		t = one_read(b);
		keys += t.keys + t.mouse;
		runs++;
	}
	ok(keys == 0, "%ld pastes whose text held end markers and any bytes after them: no key (%ld came)", runs, keys);
}

int main(void)
{
	known_keys();
	paused_paste();
	stray_paste_start();
	after_paste_end();
	end_marker_at_read_boundary();
	fuzz();
	fuzz_embedded_end();
	return tap_done();
}
