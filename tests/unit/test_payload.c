/*
 * test_payload — the executor's transfer data: a filled payload passes its own check and
 * nothing else does; every single flipped bit fails the checksum; a whole payload of
 * another iteration, stage, microbatch or kind passes the checksum and is named as
 * mis-routed; the store of what ops keep for their backward is keyed by (stage,
 * microbatch), so Ws may take their inputs in any order, and only after their I.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "exec/payload.h"
#include "exec/xsum.h"
#include "../tap.h"

/* xsum.h, which the GPU's fill and checksum kernels compile too, pinned against values
 * computed from its definition by an independent (Python) implementation; then the
 * header check the cuda backend uses */
static void test_xsum(void)
{
	struct payload_tag t = { 3, { 2, 5, OP_F, 0 } };
	unsigned char buf[PAYLOAD_MAX], other[PAYLOAD_MAX];
	char why[200];
	unsigned char b[100], hex[17];
	uint64_t sum = 0;

	for (int i = 0; i < 100; i++)
		b[i] = (unsigned char)(i * 7 + 3);
	ok(xsum_mix(0x0123456789abcdefull) == 0xb2c058e4ebb5112cull, "xsum_mix: splitmix64's finalizer");
	ok(xsum_stream(0x1234, 0) == 0x5f642f87d5e23888ull && xsum_stream(0x1234, 5) == 0x1e2ac6b725fc033eull,
	   "xsum_stream: splitmix64's words 0 and 5 of seed 0x1234");
	ok(xsum(b, 100) == 0xa16854ef715e4d83ull, "xsum of 100 bytes (a zero-padded tail, word 3 left out)");
	for (size_t i = 0; i < xsum_words(100); i++)   /* in any order, as the GPU's threads add it */
		sum += xsum_term(xsum_words(100) - 1 - i, xsum_word(b, 100, xsum_words(100) - 1 - i));
	ok(sum == xsum(b, 100), "the sum of the terms in any order is the checksum");
	b[24] ^= 0xff;
	ok(xsum(b, 100) == 0xa16854ef715e4d83ull, "the checksum's own word does not count");
	payload_fill(buf, 64, &t);
	for (int i = 0; i < 8; i++)
		snprintf((char *)hex + 2 * i, 3, "%02x", buf[24 + i]);
	ok(strcmp((char *)hex, "24874de08d5c311f") == 0, "the checksum of 2F5 of iteration 3, 64 bytes: %s", hex);
	for (int i = 0; i < 8; i++)
		snprintf((char *)hex + 2 * i, 3, "%02x", buf[32 + i]);
	ok(strcmp((char *)hex, "912b0d5955e93a64") == 0, "its stream's first word: %s", hex);
	payload_fill(buf, 45, &t);
	for (int i = 0; i < 8; i++)
		snprintf((char *)hex + 2 * i, 3, "%02x", buf[24 + i]);
	ok(strcmp((char *)hex, "268fab548a57021d") == 0, "45 bytes (a cut last word): %s", hex);
	/* what the cuda backend checks: the header and a checksum the GPU computed */
	payload_fill(buf, 256, &t);
	sum = xsum(buf, 256);
	ok(payload_check_head(buf, 256, &sum, &t, why, sizeof(why)) == 0, "a header and its data's checksum pass");
	sum++;
	ok(payload_check_head(buf, 256, &sum, &t, why, sizeof(why)) < 0 && strstr(why, "failed its checksum"),
	   "another checksum of the data fails: %s", why);
	ok(payload_check_head(buf, 257, NULL, &t, why, sizeof(why)) < 0 && strstr(why, "not a payload of 257"),
	   "a header of another length fails: %s", why);
	payload_header(other, (uint64_t)5 << 32 | 1000, &t);
	ok(payload_check_head(other, (uint64_t)5 << 32 | 1000, NULL, &t, why, sizeof(why)) == 0,
	   "a header of a transfer past 4 GiB keeps its length's low 32 bits");
}

/* the store: Ws take their inputs by (stage, microbatch), whatever the order */
static void test_store(void)
{
	char why[200];
	int M = 4;
	uint64_t store[2 * 4 * 2] = { 0 };
	int bad = 0;

	for (int m = 0; m < M; m++) {
		struct action f = { 1, m, OP_F, 0 }, i = { 1, m, OP_I, 0 };

		bad += payload_stash(store, M, 7, &f, why, sizeof(why)) != 0;
		bad += payload_stash(store, M, 7, &i, why, sizeof(why)) != 0;
	}
	is_int(bad, 0, "F then I for every microbatch of stage 1");
	for (int m = M - 1; m >= 0; m--) {
		struct action w = { 1, m, OP_W, 0 };

		bad += payload_stash(store, M, 7, &w, why, sizeof(why)) != 0;
	}
	is_int(bad, 0, "the Ws in reverse order each find their inputs");
	{
		struct action w = { 1, 2, OP_W, 0 }, i = { 1, 2, OP_I, 0 }, f = { 1, 3, OP_F, 0 }, b = { 1, 3, OP_B, 0 };

		ok(payload_stash(store, M, 7, &w, why, sizeof(why)) < 0 && strstr(why, "1W2 found no inputs of its I"),
		   "a W taken twice finds nothing: %s", why);
		ok(payload_stash(store, M, 7, &i, why, sizeof(why)) < 0 &&
		   strstr(why, "1I2 found no activations of its forward"), "an I without its F: %s", why);
		ok(payload_stash(store, M, 7, &f, why, sizeof(why)) == 0 && payload_stash(store, M, 8, &b, why, sizeof(why)) < 0,
		   "an F of another iteration does not count");
		ok(payload_stash(store, M, 7, &b, why, sizeof(why)) == 0, "a full B takes its F's activations");
	}
}

int main(void)
{
	static const size_t lens[] = { PAYLOAD_MIN, 33, 40, 257, PAYLOAD_MAX };
	struct payload_tag t = { 3, { 2, 5, OP_F, 0 } };
	unsigned char buf[PAYLOAD_MAX], other[PAYLOAD_MAX];
	char why[200];

	test_xsum();
	is_int((int)payload_len(0, PAYLOAD_MAX), PAYLOAD_MIN, "an empty transfer still carries a header");
	is_int((int)payload_len(100, PAYLOAD_MAX), 100, "a small transfer carries all its bytes");
	is_int((int)payload_len(1u << 30, PAYLOAD_MAX), PAYLOAD_MAX, "a large one its first PAYLOAD_MAX");
	is_int((int)payload_len(1u << 30, 256), 256, "or the cap asked for");
	is_int((int)payload_len(1u << 30, 1u << 20), PAYLOAD_MAX, "never more than PAYLOAD_MAX");
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		size_t n = lens[i];
		int flips = 0, caught = 0;

		payload_fill(buf, n, &t);
		ok(payload_check(buf, n, &t, why, sizeof(why)) == 0, "%zu bytes: a payload passes its own check", n);
		payload_fill(other, n, &t);
		ok(memcmp(buf, other, n) == 0, "%zu bytes: filling is deterministic", n);
		/* every bit of the header and, for the long ones, every 13th byte of the stream */
		for (size_t b = 0; b < n; b += b < 64 ? 1 : 13)
			for (int bit = 0; bit < 8; bit++) {
				buf[b] ^= (unsigned char)(1u << bit);
				flips++;
				caught += payload_check(buf, n, &t, why, sizeof(why)) < 0;
				buf[b] ^= (unsigned char)(1u << bit);
			}
		is_int(caught, flips, "%zu bytes: every one of %d flipped bits is caught", n, flips);
		ok(payload_check(buf, n - 1, &t, why, sizeof(why)) < 0 && strstr(why, "corrupted"),
		   "%zu bytes: a short read is refused: %s", n, why);
	}
	payload_fill(buf, 64, &t);
	buf[50] ^= 1;
	ok(payload_check(buf, 64, &t, why, sizeof(why)) < 0 && strstr(why, "failed its checksum (corrupted"),
	   "a flipped stream byte: %s", why);
	{
		struct payload_tag others[] = {
			{ 4, { 2, 5, OP_F, 0 } }, { 3, { 1, 5, OP_F, 0 } }, { 3, { 2, 6, OP_F, 0 } }, { 3, { 2, 5, OP_I, 0 } },
		};
		static const char *const named[] = { "2F5 of iteration 4", "1F5 of iteration 3", "2F6 of iteration 3",
		                                      "2I5 of iteration 3" };

		for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
			payload_fill(buf, 128, &others[i]);
			ok(payload_check(buf, 128, &t, why, sizeof(why)) < 0 && strstr(why, named[i]) && strstr(why, "(mis-routed)"),
			   "another transfer's whole payload is named: %s", why);
		}
	}
	test_store();
	return tap_done();
}
