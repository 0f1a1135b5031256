/*
 * keydec — input bytes to keys (see keydec.h).
 *
 * A small state machine: ground, after ESC, inside a CSI (ESC [ parameters final), an SS3
 * (ESC O parameters final), the linux console's ESC [ [ X, the three bytes of an X10 mouse
 * report, and a bracketed paste (text up to ESC [ 2 0 1 ~). A sequence is collected to its
 * final byte and only then looked up, so its tail can never leak out as keys; anything
 * unknown, cut short or interrupted is one KEV_DROP. The one idea that keeps the decoder
 * safe: a byte inside a sequence is never re-read as a key, except an ESC, which starts the
 * next sequence (a terminal never puts one inside another).
 */
#include "config.h"
#include "keydec.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* S_PASTE_TAIL: a paste that paused past KEYDEC_PASTE_MS (a slow link): its text so far
 * has ended, but what comes until its end marker (or KEYDEC_PASTE_MAX_MS after its start,
 * which no byte extends) is still paste text, never keys. S_STRING: an OSC or DCS string (a terminal's reply, a colour query's
 * answer), read to its terminator and dropped whole; S_STRING_START: ESC ] or ESC P, which
 * is such a string only when what follows is its parameter (a digit, or DCS's $ + > = ! |),
 * and otherwise Esc and ']' or 'P' typed apart, or an Alt chord (keydec_idle tells which). */
enum { S_GROUND, S_ESC, S_CSI, S_SS3, S_LINUX, S_X10, S_PASTE, S_PASTE_TAIL, S_STRING, S_STRING_START,
       S_ALT_CONT,     /* the rest of a UTF-8 character an Alt chord began (len: bytes left) */
       S_HOLD };       /* after a paste's end marker, until a read with bytes after it runs
                        * dry, or a timeout (KEYDEC_HOLD_MAX) */

static const char paste_end[] = "\033[201~";
static const char paste_start[] = "\033[200~";
#define MARKER_LEN 6

void keydec_init(struct keydec *d, bool mouse)
{
	memset(d, 0, sizeof(*d));
	d->mouse = mouse;
	d->seq_ms = KEYDEC_SEQ_MS;
}

void keydec_clock(struct keydec *d, long long now_ms)
{
	d->now_ms = now_ms;
}

static struct kev *push(struct keydec *d, enum kev_kind kind)
{
	struct kev *ev;

	if (d->qn == KEYDEC_QUEUE)
		return NULL;    /* the caller drains after each byte: cannot happen; never a key */
	ev = &d->q[(d->qhead + d->qn++) % KEYDEC_QUEUE];
	memset(ev, 0, sizeof(*ev));
	ev->kind = kind;
	return ev;
}

static void push_key(struct keydec *d, int key)
{
	struct kev *ev = push(d, KEV_KEY);

	if (ev)
		ev->key = key;
}

/* Whether the sequence collected (after its ESC) is a terminal's reply rather than a
 * key: an OSC or DCS string; a CSI with a private parameter ('?' or '>': device
 * attributes, mode reports), a cursor position report (a key with R has parameter 1 and
 * was taken as one), a status report (n), a window report (t) or a focus event (I, O). */
static bool is_reply(const struct keydec *d)
{
	int final = d->len > 0 ? d->seq[d->len - 1] : 0;

	if (d->len > 0 && (d->seq[0] == ']' || d->seq[0] == 'P'))
		return true;
	if (d->len < 2 || d->seq[0] != '[' || d->overlong)
		return false;
	if (d->seq[1] == '?' || d->seq[1] == '>')
		return true;
	if (d->len == 2)
		return final == 'I' || final == 'O';
	return final == 'R' || final == 'n' || final == 't';
}

/* The sequence collected so far (after its ESC), dropped as one unknown key (or reply). */
static void push_drop(struct keydec *d)
{
	struct kev *ev = push(d, KEV_DROP);
	size_t k;

	d->state = S_GROUND;
	if (!ev)
		return;
	ev->drop = is_reply(d) ? KEV_DROP_REPLY : KEV_DROP_UNKNOWN;
	k = (size_t)snprintf(ev->what, sizeof(ev->what), "ESC");
	for (int i = 0; i < d->len && k + 5 < sizeof(ev->what); i++)
		k += (size_t)snprintf(ev->what + k, sizeof(ev->what) - k,
		                      d->seq[i] > 32 && d->seq[i] < 127 ? "%c" : "\\x%02x", d->seq[i]);
	if (d->overlong && k + 4 < sizeof(ev->what))
		snprintf(ev->what + k, sizeof(ev->what) - k, "...");
}

/* ESC and byte in one read: an Alt chord, dropped (what: "Alt-q"). */
static void push_alt(struct keydec *d, int byte)
{
	struct kev *ev = push(d, KEV_DROP);

	d->state = S_GROUND;
	if (!ev)
		return;
	ev->drop = KEV_DROP_ALT;
	snprintf(ev->what, sizeof(ev->what), byte > 32 && byte < 127 ? "Alt-%c" : "Alt-\\x%02x", byte);
}

static void push_mouse(struct keydec *d, int b, int x, int y, bool release)
{
	struct kev *ev;
	int button = 0;

	d->state = S_GROUND;
	if (!d->mouse || release || (b & 32))
		return;     /* mouse off, a release or a motion: nothing to do, nothing to say */
	if ((b & ~(4 | 8 | 16)) == 0)
		button = 1;
	else if ((b & 64) && (b & 3) == 0)
		button = b & 4 ? 6 : 4;
	else if ((b & 64) && (b & 3) == 1)
		button = b & 4 ? 7 : 5;
	else if ((b & 64) && (b & 3) == 2)
		button = 6;
	else if ((b & 64) && (b & 3) == 3)
		button = 7;
	if (!button || x < 1 || y < 1 || !(ev = push(d, KEV_MOUSE)))
		return;
	ev->button = button;
	ev->x = x - 1;
	ev->y = y - 1;
}

/* "1;5" into up to two numbers (absent ones are -1); false when it holds anything else. */
static bool params(const char *s, int *p1, int *p2)
{
	char *end;

	*p1 = *p2 = -1;
	if (!*s)
		return true;
	if (*s != ';') {
		*p1 = (int)strtol(s, &end, 10);
		if (end == s || end - s > 4)
			return false;
		s = end;
	}
	if (!*s)
		return true;
	if (*s++ != ';')
		return false;
	*p2 = (int)strtol(s, &end, 10);
	return end != s && end - s <= 3 && !*end;
}

/* A key and its xterm modifier parameter (1 + shift 1 + alt 2 + ctrl 4) as one key code:
 * shift and ctrl on the F-keys (F13-F24, F25-F36), on Left/Right; ERR for the rest. */
static int modified(int key, int mod)
{
	if (mod <= 1)
		return key;
	if (key >= KEY_F(1) && key <= KEY_F(12)) {
		if (mod == 2)
			return key + 12;
		if (mod == 5)
			return key + 24;
		return ERR;
	}
	if (key == KEY_LEFT || key == KEY_RIGHT) {
		if (mod == 2)
			return key == KEY_LEFT ? KEY_SLEFT : KEY_SRIGHT;
		if (mod == 5)
			return key == KEY_LEFT ? KEYDEC_CTRL_LEFT : KEYDEC_CTRL_RIGHT;
	}
	return ERR;
}

/* The key of a final letter after CSI or SS3 (arrows, Home/End, F1-F4), or ERR. */
static int letter_key(int f)
{
	switch (f) {
	case 'A': return KEY_UP;
	case 'B': return KEY_DOWN;
	case 'C': return KEY_RIGHT;
	case 'D': return KEY_LEFT;
	case 'H': return KEY_HOME;
	case 'F': return KEY_END;
	case 'P': return KEY_F(1);
	case 'Q': return KEY_F(2);
	case 'R': return KEY_F(3);
	case 'S': return KEY_F(4);
	default: return ERR;
	}
}

/* The key of CSI n ~ (VT220 editing keys and F-keys), or ERR. */
static int tilde_key(int n)
{
	static const int fkeys[] = { 11, 12, 13, 14, 15, 17, 18, 19, 20, 21, 23, 24 };

	switch (n) {
	case 1: case 7: return KEY_HOME;
	case 4: case 8: return KEY_END;
	case 2: return KEY_IC;
	case 3: return KEY_DC;
	case 5: return KEY_PPAGE;
	case 6: return KEY_NPAGE;
	default: break;
	}
	for (int i = 0; i < 12; i++)
		if (fkeys[i] == n)
			return KEY_F(i + 1);
	return ERR;
}

/* An SGR mouse report: ESC [ < b ; x ; y M (press) or m (release). */
static void sgr_mouse(struct keydec *d, const char *p, int final)
{
	int v[3], n = 0;

	while (n < 3) {
		char *end;
		long x = strtol(p, &end, 10);

		if (end == p || end - p > 5 || x < 0)
			break;
		v[n++] = (int)x;
		p = end;
		if (*p != ';')
			break;
		p++;
	}
	if (n != 3 || *p || (final != 'M' && final != 'm')) {
		push_drop(d);
		return;
	}
	push_mouse(d, v[0], v[1], v[2], final == 'm');
}

/* A whole CSI or SS3 sequence, seq = "[..." or "O...": the key it means, a mouse report,
 * the start of a paste, or a drop. */
static void sequence(struct keydec *d)
{
	char s[KEYDEC_SEQ_MAX + 1];
	int final, p1, p2, key = ERR;
	bool ss3 = d->seq[0] == 'O';

	if (d->overlong) {
		push_drop(d);
		return;
	}
	memcpy(s, d->seq, (size_t)d->len);
	s[d->len] = '\0';
	final = (unsigned char)s[d->len - 1];
	s[d->len - 1] = '\0';
	d->state = S_GROUND;
	if (!ss3 && s[1] == '<') {
		sgr_mouse(d, s + 2, final);
		return;
	}
	if (!ss3 && final == 'M' && d->len == 2) {
		d->state = S_X10;    /* three bytes follow: button, column, row */
		d->len = 0;
		return;
	}
	if (!params(s + 1, &p1, &p2)) {
		push_drop(d);
		return;
	}
	if (final == '~' && !ss3) {
		if (p1 == 200 && p2 < 0) {
			d->state = S_PASTE;
			d->paste_match = 0;
			d->paste_len = 0;
			d->paste_t0 = d->now_ms;
			return;
		}
		if (p1 == 201 && p2 < 0)
			return;     /* the end of a paste that never began: nothing */
		key = p1 >= 0 ? tilde_key(p1) : ERR;
		if (key != ERR)
			key = modified(key, p2);
	} else if (final == 'Z' && !ss3 && p1 < 0) {
		key = KEY_BTAB;
	} else if (!ss3 && p1 < 0 && (final == 'c' || final == 'd')) {
		key = final == 'c' ? KEY_SRIGHT : KEY_SLEFT;        /* rxvt's shifted arrows */
	} else if (ss3 && p1 < 0 && (final == 'c' || final == 'd')) {
		key = final == 'c' ? KEYDEC_CTRL_RIGHT : KEYDEC_CTRL_LEFT;   /* and its ctrl ones */
	} else if ((key = letter_key(final)) != ERR) {
		/* CSI 1 ; m X and SS3 m X (older xterms put the modifier first) */
		int mod = ss3 ? (p2 >= 0 ? p2 : p1) : p2;

		if (!ss3 && p1 >= 0 && p1 != 1)
			key = ERR;
		else if (ss3 && p1 >= 0 && p2 >= 0 && p1 != 1)
			key = ERR;
		else
			key = modified(key, mod);
	}
	if (key == ERR) {
		push_drop(d);
		return;
	}
	push_key(d, key);
}

static void paste_text(struct keydec *d, int byte)
{
	struct kev *ev = push(d, KEV_PASTE);

	if (ev)
		ev->key = byte;
	if (d->paste_len < 1 << 30)
		d->paste_len++;
}

static void paste_ended(struct keydec *d, bool lost)
{
	struct kev *ev = push(d, KEV_PASTE_END);

	if (ev) {
		ev->key = (int)d->paste_len;
		ev->lost = lost;
	}
	d->paste_len = 0;
}

static void paste_byte(struct keydec *d, int byte)
{
	if (byte == (unsigned char)paste_end[d->paste_match]) {
		if (++d->paste_match == MARKER_LEN) {
			/* what follows in this read is held: pasted, or typed (KEYDEC_HOLD_MAX) */
			d->state = S_HOLD;
			d->nhold = 0;
			d->paste_match = 0;
			paste_ended(d, false);
		}
		return;
	}
	/* what looked like the end marker was text after all */
	for (int i = 0; i < d->paste_match; i++)
		paste_text(d, (unsigned char)paste_end[i]);
	d->paste_match = 0;
	if (byte == (unsigned char)paste_end[0]) {
		d->paste_match = 1;
		return;
	}
	paste_text(d, byte);
}

/* The first n held bytes as paste text, the paste markers among them left out. */
static void hold_flush(struct keydec *d, int n)
{
	for (int i = 0; i < n; i++) {
		if (n - i >= MARKER_LEN && (memcmp(d->hold + i, paste_start, MARKER_LEN) == 0 ||
		                            memcmp(d->hold + i, paste_end, MARKER_LEN) == 0)) {
			i += MARKER_LEN - 1;
			continue;
		}
		paste_text(d, d->hold[i]);
	}
}

/* A byte after a paste's end marker, in the same read. */
static void hold_byte(struct keydec *d, int byte)
{
	d->hold[d->nhold++] = (unsigned char)byte;
	if (byte == (unsigned char)paste_end[d->paste_match])
		d->paste_match++;
	else
		d->paste_match = byte == (unsigned char)paste_end[0];
	if (d->paste_match == MARKER_LEN) {
		/* another end marker: the terminal's own, closing a paste whose text held one
		 * (the bytes between were pasted, never keys); what follows is held again */
		hold_flush(d, d->nhold - MARKER_LEN);
		paste_ended(d, false);
		d->nhold = d->paste_match = 0;
	} else if (d->nhold == KEYDEC_HOLD_MAX) {
		/* more than typing brings in one read: pasted, and the paste goes on */
		hold_flush(d, d->nhold - d->paste_match);
		d->nhold = 0;
		d->state = S_PASTE;
	}
}

/* The read ran dry after a paste's end: the bytes held since were typed (none was an end
 * marker), and are decoded as keys. */
static void hold_release(struct keydec *d)
{
	unsigned char b[KEYDEC_HOLD_MAX];
	int n = d->nhold;

	memcpy(b, d->hold, (size_t)n);
	d->nhold = d->paste_match = 0;
	d->state = S_GROUND;
	for (int i = 0; i < n; i++)
		keydec_feed(d, b[i]);
}

static void collect(struct keydec *d, int byte)
{
	if (d->len < KEYDEC_SEQ_MAX)
		d->seq[d->len++] = (unsigned char)byte;
	else
		d->overlong = true;
}

/* The byte after an ESC. */
static void esc_byte(struct keydec *d, int byte)
{
	if (byte == '[' || byte == 'O') {
		collect(d, byte);
		d->state = byte == '[' ? S_CSI : S_SS3;
	} else if (byte == 27) {
		push_key(d, 27);        /* Esc Esc: one Esc, and the next may start a sequence */
		d->apart = false;
	} else if (byte == ']' || byte == 'P') {
		collect(d, byte);       /* a string, if a parameter follows */
		d->state = S_STRING_START;
		d->intro_apart = d->apart;
	} else if (d->apart) {
		/* Esc, then a key typed apart from it */
		push_key(d, 27);
		d->state = S_GROUND;
		keydec_feed(d, byte);
	} else {
		/* sent with its ESC: an Alt (Meta) chord, never the key's own command; a
		 * non-ASCII key's character is dropped whole with it */
		push_alt(d, byte);
		if (byte >= 0xc2 && byte <= 0xf4) {
			d->state = S_ALT_CONT;
			d->len = byte >= 0xf0 ? 3 : byte >= 0xe0 ? 2 : 1;
		}
	}
}

/* The byte after ESC ] or ESC P: a string's parameter, or not a string at all. */
static void string_start_byte(struct keydec *d, int byte)
{
	if ((byte >= '0' && byte <= '9') || (d->seq[0] == 'P' && byte && strchr("$+>=!|", byte))) {
		collect(d, byte);       /* to its ST (ESC \) or, for OSC, BEL */
		d->state = S_STRING;
		return;
	}
	/* no string: Esc and ']' or 'P' typed apart, or an Alt chord; then this byte */
	if (d->intro_apart) {
		push_key(d, 27);
		push_key(d, d->seq[0]);
		d->state = S_GROUND;
	} else {
		push_alt(d, d->seq[0]);
	}
	keydec_feed(d, byte);
}

void keydec_feed(struct keydec *d, int byte)
{
	byte &= 0xff;
	d->last_ms = d->now_ms;
	switch (d->state) {
	case S_GROUND:
		if (byte == 27) {
			d->state = S_ESC;
			d->len = 0;
			d->overlong = false;
			d->apart = false;
		} else {
			push_key(d, byte);
		}
		return;
	case S_ESC:
		esc_byte(d, byte);
		return;
	case S_ALT_CONT:
		if ((byte & 0xc0) == 0x80 && --d->len > 0)
			return;
		d->state = S_GROUND;
		if ((byte & 0xc0) != 0x80)
			keydec_feed(d, byte);   /* the character was cut short: this is what follows */
		return;
	case S_STRING_START:
		string_start_byte(d, byte);
		return;
	case S_STRING:
		if (byte == 7 || (byte == '\\' && d->len > 0 && d->seq[d->len - 1] == 27)) {
			collect(d, byte);
			push_drop(d);
			return;
		}
		collect(d, byte);
		if (d->len < KEYDEC_SEQ_MAX)
			return;
		/* past the buffer: keep only whether the last byte was ESC, for the ST */
		d->seq[KEYDEC_SEQ_MAX - 1] = (unsigned char)byte;
		return;
	case S_CSI:
	case S_SS3:
		if (byte == 27) {
			push_drop(d);           /* cut short by the next sequence */
			keydec_feed(d, byte);
			return;
		}
		if (d->state == S_CSI && d->len == 1 && byte == '[') {
			collect(d, byte);
			d->state = S_LINUX;
			return;
		}
		collect(d, byte);
		if (byte < 0x20 || byte > 0x7e)
			push_drop(d);           /* a control byte or a non-ASCII one: no sequence has it */
		else if (byte >= 0x40)
			sequence(d);            /* the final byte (ECMA-48) */
		return;
	case S_LINUX:
		if (byte == 27) {
			push_drop(d);
			keydec_feed(d, byte);
			return;
		}
		collect(d, byte);
		if (byte >= 'A' && byte <= 'E')
			push_key(d, KEY_F(byte - 'A' + 1));     /* the linux console's F1-F5 */
		else
			push_drop(d);
		d->state = S_GROUND;
		return;
	case S_X10:
		if (byte < 32) {
			/* no report has a control byte: it was cut short, and this starts what follows */
			d->state = S_GROUND;
			if (byte == 27)
				keydec_feed(d, byte);
			return;
		}
		d->seq[d->len++] = (unsigned char)byte;
		if (d->len == 3) {
			int b = d->seq[0] - 32;

			push_mouse(d, b < 0 ? 0 : b, d->seq[1] - 32, d->seq[2] - 32, (b & 3) == 3 && !(b & 64));
		}
		return;
	case S_PASTE:
	case S_PASTE_TAIL:
		paste_byte(d, byte);
		return;
	case S_HOLD:
		hold_byte(d, byte);
		return;
	default:
		d->state = S_GROUND;
		return;
	}
}

/* A paste whose end marker did not come in KEYDEC_PASTE_MAX_MS: over, keys are keys again. */
static void paste_lost(struct keydec *d)
{
	d->paste_match = 0;
	d->state = S_GROUND;
	paste_ended(d, true);
}

void keydec_timeout(struct keydec *d)
{
	switch (d->state) {
	case S_ESC:
		push_key(d, 27);
		d->state = S_GROUND;
		break;
	case S_STRING_START:
		if (d->intro_apart) {
			push_key(d, 27);
			push_key(d, d->seq[0]);
			d->state = S_GROUND;
		} else {
			push_alt(d, d->seq[0]);
		}
		break;
	case S_CSI: case S_SS3: case S_LINUX:
		push_drop(d);
		break;
	case S_X10:
	case S_ALT_CONT:
		d->state = S_GROUND;    /* a mouse report or an Alt chord's character cut short: nothing */
		break;
	case S_PASTE:
		if (d->now_ms - d->paste_t0 >= KEYDEC_PASTE_MAX_MS) {
			paste_lost(d);
			break;
		}
		/* the paste paused: what came ends here, and the rest, when it comes, is still
		 * paste text (a byte of it taken as a key could save or quit) */
		d->state = S_PASTE_TAIL;
		paste_ended(d, false);
		break;
	case S_PASTE_TAIL:
		/* no end marker by KEYDEC_PASTE_MAX_MS after the start: it was lost */
		paste_lost(d);
		break;
	case S_STRING:
		push_drop(d);
		break;
	case S_HOLD:
		hold_release(d);
		break;
	default:
		break;
	}
}

void keydec_idle(struct keydec *d)
{
	/* a read that ran dry right at an end marker has decided nothing: the marker may
	 * have been pasted text, and the paste's next read is on its way; the timeout
	 * ends that hold (a key typed after a paste waits for it, at most seq_ms) */
	if (d->state == S_HOLD && d->nhold > 0)
		hold_release(d);
	d->apart = true;
}

/* What is left of a paste's KEYDEC_PASTE_MAX_MS, counted from the last byte. */
static int paste_left_ms(const struct keydec *d)
{
	long long left = d->paste_t0 + KEYDEC_PASTE_MAX_MS - d->last_ms;

	return left < 0 ? 0 : left > KEYDEC_PASTE_MAX_MS ? KEYDEC_PASTE_MAX_MS : (int)left;
}

int keydec_wait_ms(const struct keydec *d)
{
	int left;

	switch (d->state) {
	case S_GROUND:
		return -1;
	case S_PASTE:
		left = paste_left_ms(d);
		return left < KEYDEC_PASTE_MS ? left : KEYDEC_PASTE_MS;
	case S_PASTE_TAIL:
		return paste_left_ms(d);
	default:
		return d->seq_ms;
	}
}

bool keydec_next(struct keydec *d, struct kev *ev)
{
	if (d->qn == 0)
		return false;
	*ev = d->q[d->qhead];
	d->qhead = (d->qhead + 1) % KEYDEC_QUEUE;
	d->qn--;
	return true;
}
