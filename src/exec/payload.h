/*
 * payload — the data every transfer of the executor carries, and its check.
 *
 * A transfer's bytes begin with a header that tags them with what they are — the
 * producing op (stage, microbatch, kind) and the iteration — and a checksum over the tag
 * and the rest of the bytes, which are a stream derived from the tag. The sender fills
 * them (payload_fill), the receiver checks them against the transfer it expects
 * (payload_check): a checksum that fails is corrupted data, a valid payload with another
 * tag is data that went to the wrong place. The emulators carry these bytes themselves
 * (the first PAYLOAD_MAX of a transfer); the cuda backend fills the whole transfer on its
 * GPU from the header the host writes (payload_header) and checksums all of what arrived
 * there, the host checking the header and the sum (payload_check_head). The checksum and
 * the stream are xsum.h's, shared by the host and the GPU.
 */
#ifndef OCTO_EXEC_PAYLOAD_H
#define OCTO_EXEC_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "action.h"

/* The bytes of a transfer that are filled and checked: min(its size, this), at least the
 * header. */
#define PAYLOAD_MAX 4096
#define PAYLOAD_MIN 32

struct payload_tag {
	uint32_t iter;
	struct action op;          /* the producer (stage, mb, kind; pair ignored) */
};

/* How many bytes of a transfer of `bytes` are filled and checked (cap <= PAYLOAD_MAX). */
size_t payload_len(uint64_t bytes, size_t cap);
/* Fills buf[0 .. len) (len >= PAYLOAD_MIN) with the tagged, checksummed bytes of t. */
void payload_fill(void *buf, size_t len, const struct payload_tag *t);
/* The PAYLOAD_MIN-byte header of a transfer of `bytes` for t, its checksum 0: what the
 * cuda backend's fill kernel (cuda_work.h) completes on the GPU, the stream after it and
 * the checksum of it all (xsum.h) in the header. */
void payload_header(void *buf, uint64_t bytes, const struct payload_tag *t);
/* 0 when buf[0 .. len) holds exactly what payload_fill(want) writes; else -1 with why (a
 * phrase: "failed its checksum (corrupted)", "carries the output of 2F4 of iteration 0
 * (mis-routed)") in why[0 .. n). */
int payload_check(const void *buf, size_t len, const struct payload_tag *want, char *why, size_t n);
/* The same from the header alone (head: its first PAYLOAD_MIN bytes) of a transfer of
 * `bytes` whose checksum was computed elsewhere (*sum: on the GPU, over every byte that
 * arrived; NULL: not known, only the header and the tag are checked). */
int payload_check_head(const void *head, uint64_t bytes, const uint64_t *sum, const struct payload_tag *want,
                       char *why, size_t n);
/* Injected mis-routing: t becomes the tag of another transfer's data — the next
 * microbatch's, or with one microbatch, the next iteration's (never t itself). */
void payload_misroute(struct payload_tag *t, int microbatches);
/* A 64-bit FNV-1a hash of n bytes, continuing from h (start with PAYLOAD_HASH_INIT). */
#define PAYLOAD_HASH_INIT 0xcbf29ce484222325ull
uint64_t payload_hash(uint64_t h, const void *data, size_t n);
/* A short fingerprint of a tag (the stash of the emulators keeps it per (stage, mb)). */
uint64_t payload_tag_hash(const struct payload_tag *t);

/* The store of what ops keep for their backward, per (stage, microbatch): store holds
 * stages x microbatches x 2 fingerprints (zeroed at the start of an iteration). F puts
 * its activations, I or B takes them, I puts what W needs, W takes it — in any order the
 * plan allows. 0, or -1 when what a takes is not there (why names what is missing). */
int payload_stash(uint64_t *store, int microbatches, uint32_t iter, const struct action *a, char *why, size_t n);

#endif
