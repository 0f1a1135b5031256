/*
 * strbuf — a growable, always NUL-terminated byte buffer for building text.
 *
 * Initialise with STRBUF_INIT or strbuf_init(); the buffer owns its memory until
 * strbuf_release() (which leaves it empty and reusable) or strbuf_detach() (which hands
 * the string to the caller, who frees it with free()). Allocation failure is sticky:
 * further appends are ignored and strbuf_failed() reports it, so callers check once.
 */
#ifndef OCTO_STRBUF_H
#define OCTO_STRBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;     /* never NULL once initialised: "" when empty */
	size_t len;
	size_t alloc;
	bool oom;      /* an allocation failed; contents are truncated */
};

#define STRBUF_INIT { (char *)strbuf_empty, 0, 0, false }
extern const char strbuf_empty[1];

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
/* Returns the heap string (caller frees) and leaves sb empty; NULL after an allocation failure. */
char *strbuf_detach(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
bool strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t n);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Appends n copies of c. */
void strbuf_pad(struct strbuf *sb, char c, size_t n);
void strbuf_truncate(struct strbuf *sb, size_t len);
/* Appends s[0..n) for a terminal: valid UTF-8 is copied, control characters (C0, DEL,
 * U+0080..U+009F), the formatting characters that reorder text (utf8_reorders) and bytes
 * that are not UTF-8 become "\xNN" / "\u0085" / "\u202e", so text from files and
 * arguments can never move the cursor, retitle a terminal or print as other text. With
 * keep_newlines, '\n' is copied as is. */
void strbuf_add_printable(struct strbuf *sb, const char *s, size_t n, bool keep_newlines);
/* Length (1..4) of the valid UTF-8 sequence at s with at most n bytes left, its code point
 * in *cp; 0 for a byte that starts none (overlong forms and surrogates included). */
size_t strbuf_utf8_len(const unsigned char *s, size_t n, unsigned *cp);
/* Whether code point cp reorders the text around it on a terminal (U+061C, U+200E-U+200F,
 * U+202A-U+202E, U+2066-U+2069: the "Trojan Source" class): a name holding one prints as
 * other text (an id reading backwards). */
bool utf8_reorders(unsigned cp);
/* base followed by suffix, newly allocated, in at most max bytes (NUL not counted): base
 * (valid UTF-8) is cut between characters when both do not fit, never the suffix, so a
 * derived name ("MODEL tuned") reads back whole. NULL when out of host memory. */
char *str_name_with_suffix(const char *base, const char *suffix, size_t max);
/* Whether s[0..n) is all valid UTF-8. */
bool str_is_utf8(const char *s, size_t n);
/* Copies text (n bytes) into out (cap bytes, NUL included); longer text keeps its first
 * third and its end around " ... ", cut between UTF-8 characters: a message about a long
 * path keeps the file's start and what is wrong with it. */
void str_fit_middle(char *out, size_t cap, const char *text, size_t n);
static inline bool strbuf_failed(const struct strbuf *sb) { return sb->oom; }

#endif
