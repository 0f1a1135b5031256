/*
 * keydec — the terminal's input bytes decoded into keys, pasted text and mouse reports.
 *
 * Every escape sequence is read whole (CSI and SS3, with parameters and modifiers, X10
 * and SGR mouse reports, bracketed paste) before anything is decided, and what is not a
 * complete, known key becomes a KEV_DROP: none of its bytes is ever taken as a key. Pure:
 * no terminal, no clock (the caller says when the bytes of a sequence stopped coming), so
 * a unit test can feed it any byte stream in any pieces.
 */
#ifndef OCTO_UI_KEYDEC_H
#define OCTO_UI_KEYDEC_H

#include <stdbool.h>

/* Keys curses has no code for (its KEY_* values end at KEY_MAX). */
#define KEYDEC_CTRL_LEFT 0x1001
#define KEYDEC_CTRL_RIGHT 0x1002

/* How long the bytes of one sequence may take to arrive (like vim's ttimeoutlen), and
 * how long a paste may pause before its text so far is ended (what follows, up to its end
 * marker, is still paste text, never keys). */
#define KEYDEC_SEQ_MS 100
#define KEYDEC_SEQ_MS_MAX 10000
#define KEYDEC_PASTE_MS 1000
/* How long after its start marker a paste's end marker is waited for at most, on the
 * caller's clock (keydec_clock): then the paste is over and keys are keys again, however
 * many bytes kept coming (a stray ESC [ 200 ~ swallowed every key typed after it, each key
 * extending the wait). */
#define KEYDEC_PASTE_MAX_MS 5000
/* Bytes after a paste's end marker in the same read, held until the read runs dry: when
 * another end marker is among them they were pasted (a paste whose text held an end
 * marker: the terminal's own closes it) and are paste text; else they were typed and are
 * decoded as keys. More than this many are taken as pasted. */
#define KEYDEC_HOLD_MAX 48

enum kev_kind {
	KEV_KEY,        /* key: a character (0-255) or a curses KEY_* code */
	KEV_PASTE,      /* key: one byte of bracketed-paste text */
	KEV_PASTE_END,  /* a paste ended (key: its length in bytes, capped at 1 << 30; lost:
	                 * its end marker never came, KEYDEC_PASTE_MAX_MS passed) */
	KEV_MOUSE,      /* x, y (0-based), button: 1 press, 4/5 wheel up/down, 6/7 wheel left/right
	                 * (shift+wheel); only when the decoder was made with the mouse on */
	KEV_DROP        /* a sequence that is no known key; what: its bytes, printable */
};

/* Why a KEV_DROP was dropped: a sequence no key has (said, as a hint that TERM may be
 * wrong), a terminal's reply (an OSC or DCS string, a cursor position, a device
 * attribute, a focus event: dropped without a word), or an Alt chord (ESC and a key in
 * one read, which no command has). */
enum kev_drop { KEV_DROP_UNKNOWN = 0, KEV_DROP_REPLY, KEV_DROP_ALT };

struct kev {
	enum kev_kind kind;
	int key;
	int x, y, button;
	enum kev_drop drop;     /* KEV_DROP: why */
	bool lost;              /* KEV_PASTE_END: ended by the time limit, not its marker */
	char what[40];
};

#define KEYDEC_SEQ_MAX 32
#define KEYDEC_QUEUE (KEYDEC_HOLD_MAX + 16)   /* the held bytes decoded at once, and more */

struct keydec {
	bool mouse;             /* report the mouse (else its reports are dropped silently) */
	int seq_ms;             /* the wait for the rest of a sequence: KEYDEC_SEQ_MS unless set */
	int state;
	unsigned char seq[KEYDEC_SEQ_MAX];
	int len;                /* bytes of seq (a longer sequence is still read to its end) */
	bool overlong;
	bool apart;             /* since the last ESC the input ran dry (keydec_idle): what
	                         * follows was typed apart from it, not sent with it */
	bool intro_apart;       /* apart when the ']' or 'P' after it came */
	int paste_match;        /* bytes of the paste's end marker matched so far */
	long paste_len;
	long long now_ms;       /* the caller's clock (keydec_clock) */
	long long last_ms;      /* the clock when the last byte came */
	long long paste_t0;     /* the clock when the paste's start marker came */
	unsigned char hold[KEYDEC_HOLD_MAX];    /* after a paste's end, this read's bytes */
	int nhold;
	struct kev q[KEYDEC_QUEUE];
	int qhead, qn;
};

/* Caller-owned; nothing to release. */
void keydec_init(struct keydec *d, bool mouse);
/* The caller's clock in ms (any origin, never going back): given before the bytes of each
 * read and before keydec_wait_ms and keydec_timeout. It bounds a paste without its end
 * (KEYDEC_PASTE_MAX_MS after its start, whatever comes meanwhile). */
void keydec_clock(struct keydec *d, long long now_ms);
/* Feeds one byte (0-255). The events it completes are queued for keydec_next. */
void keydec_feed(struct keydec *d, int byte);
/* The caller's read found no more bytes for now. An ESC and a key in one read are an
 * Alt chord (a terminal sends both at once), dropped: no command has one; an ESC, then
 * this, then a key are the Esc key and that key, typed apart. (A key typed right after
 * Esc while the UI was too busy to read reads as a chord: dropped, never a command.)
 * The bytes held after a paste's end are decided here (KEYDEC_HOLD_MAX): drain the
 * events after it. (A read that ran dry right at the end marker holds on: the paste may
 * go on in the next read; keydec_timeout ends that.) */
void keydec_idle(struct keydec *d);
/* No byte came for keydec_wait_ms: a lone ESC becomes the Esc key, a partial sequence is
 * dropped, a paste that paused ends its text so far, and one past KEYDEC_PASTE_MAX_MS
 * without its end marker is over. */
void keydec_timeout(struct keydec *d);
/* -1 when nothing is pending, else how long after the last byte to call keydec_timeout
 * when no byte came (seq_ms; in a paste KEYDEC_PASTE_MS, or less when its time limit
 * comes first, 0 when it has passed). */
int keydec_wait_ms(const struct keydec *d);
/* The next decoded event into ev: true, or false when there is none. */
bool keydec_next(struct keydec *d, struct kev *ev);

#endif
