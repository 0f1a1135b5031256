/*
 * payload — tagged, checksummed transfer bytes (see payload.h).
 *
 * Layout, little-endian 32-bit words: magic, iteration, stage, microbatch, kind, length
 * (its low 32 bits), then the 64-bit checksum, then length - 32 bytes of a splitmix64
 * stream seeded by the tag. The checksum (xsum.h, the one the GPU computes) covers every
 * byte but its own, so a flipped bit anywhere fails it, while a whole payload of another
 * transfer passes it and is caught by its tag.
 */
#include "config.h"
#include "exec/payload.h"
#include "exec/xsum.h"

#include <stdio.h>
#include <string.h>

#define MAGIC 0x6f637450u  /* "Ptco" */
#define HEADER 32

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t payload_hash(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t payload_tag_hash(const struct payload_tag *t)
{
	unsigned char b[16];

	put32(b, t->iter);
	put32(b + 4, (uint32_t)t->op.stage);
	put32(b + 8, (uint32_t)t->op.mb);
	put32(b + 12, t->op.kind);
	return payload_hash(PAYLOAD_HASH_INIT, b, sizeof(b));
}

void payload_misroute(struct payload_tag *t, int microbatches)
{
	if (microbatches > 1)
		t->op.mb = (t->op.mb + 1) % microbatches;
	else
		t->iter++;
}

size_t payload_len(uint64_t bytes, size_t cap)
{
	size_t n = cap > PAYLOAD_MAX ? PAYLOAD_MAX : cap;

	if (bytes < n)
		n = (size_t)bytes;
	return n < PAYLOAD_MIN ? PAYLOAD_MIN : n;
}

void payload_header(void *buf, uint64_t bytes, const struct payload_tag *t)
{
	unsigned char *p = buf;

	put32(p, MAGIC);
	put32(p + 4, t->iter);
	put32(p + 8, (uint32_t)t->op.stage);
	put32(p + 12, (uint32_t)t->op.mb);
	put32(p + 16, t->op.kind);
	put32(p + 20, (uint32_t)bytes);
	memset(p + 24, 0, 8);
}

void payload_fill(void *buf, size_t len, const struct payload_tag *t)
{
	unsigned char *p = buf;
	uint64_t seed = payload_tag_hash(t), sum;

	payload_header(p, len, t);
	/* as the GPU fills a transfer: the header's terms, then each word of the stream's */
	sum = 0;
	for (size_t i = 0; i < xsum_words(len); i++)
		sum += i < XSUM_HEADER_WORDS ? xsum_term(i, xsum_word(p, len, i)) : xsum_fill_word(p, len, seed, i);
	for (int i = 0; i < 8; i++)
		p[24 + i] = (unsigned char)(sum >> (8 * i));
}

int payload_check_head(const void *head, uint64_t bytes, const uint64_t *sum, const struct payload_tag *want,
                       char *why, size_t n)
{
	const unsigned char *p = head;
	uint64_t have = 0;
	struct action got;
	char t1[ACTION_TEXT_MAX];

	if (bytes < HEADER || get32(p) != MAGIC || get32(p + 20) != (uint32_t)bytes) {
		snprintf(why, n, "is not a payload of %llu bytes (corrupted)", (unsigned long long)bytes);
		return -1;
	}
	for (int i = 0; i < 8; i++)
		have |= (uint64_t)p[24 + i] << (8 * i);
	if (sum && *sum != have) {
		snprintf(why, n, "failed its checksum (corrupted: %016llx, header says %016llx)", (unsigned long long)*sum,
		         (unsigned long long)have);
		return -1;
	}
	got = (struct action){ (int32_t)get32(p + 8), (int32_t)get32(p + 12), (uint8_t)get32(p + 16), 0 };
	if (get32(p + 4) != want->iter || got.stage != want->op.stage || got.mb != want->op.mb ||
	    got.kind != want->op.kind) {
		snprintf(why, n, "carries the output of %s of iteration %u (mis-routed)", action_format(&got, t1),
		         (unsigned)get32(p + 4));
		return -1;
	}
	/* a payload with the right checksum and tag holds the stream of that tag: nothing else
	 * passes but by a 2^-64 chance */
	return 0;
}

int payload_check(const void *buf, size_t len, const struct payload_tag *want, char *why, size_t n)
{
	uint64_t sum;

	if (len < HEADER) {
		snprintf(why, n, "is not a payload of %zu bytes (corrupted)", len);
		return -1;
	}
	sum = xsum(buf, len);
	return payload_check_head(buf, len, &sum, want, why, n);
}

int payload_stash(uint64_t *store, int microbatches, uint32_t iter, const struct action *a, char *why, size_t n)
{
	long at = op_slot_index(a->stage, microbatches, a->mb, 2, 0);
	struct payload_tag t = { iter, { a->stage, a->mb, OP_F, 0 } };
	uint64_t *f = &store[at], *w = &store[at + 1];
	char tok[ACTION_TEXT_MAX];

	if (a->kind == OP_F) {
		*f = payload_tag_hash(&t);
		return 0;
	}
	if (a->kind != OP_W) {
		if (*f != payload_tag_hash(&t)) {
			snprintf(why, n, "%s found no activations of its forward in the store", action_format(a, tok));
			return -1;
		}
		*f = 0;
	}
	t.op.kind = OP_I;
	if (a->kind == OP_I) {
		*w = payload_tag_hash(&t);
	} else if (a->kind == OP_W) {
		if (*w != payload_tag_hash(&t)) {
			snprintf(why, n, "%s found no inputs of its I in the store", action_format(a, tok));
			return -1;
		}
		*w = 0;
	}
	return 0;
}
