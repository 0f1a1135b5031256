/*
 * xsum — the checksum of a transfer's bytes and the stream they are filled with, defined
 * once for the host (payload.c: the emulators' payloads, the cuda backend's headers and
 * checks) and the GPU (cuda_work.cu's fill and checksum kernels, built by nvcc), so that
 * what the GPU computes over a whole transfer is what the unit tests pin on the host.
 *
 * The bytes are little-endian 64-bit words, the last one zero-padded. The checksum is
 *
 *     sum = Σ mix(w_i ^ key(i))  (mod 2^64)  over every word i but XSUM_SKIP,
 *
 * key(i) = i K1 + K2, mix splitmix64's finalizer. mix is a bijection, so a change to any
 * one word changes the sum; the key makes a word count where it stands (two words swapped
 * change it too); and a sum of independent terms is what thousands of GPU threads can add
 * up in any order. Word XSUM_SKIP (bytes 24..31 of a payload, payload.h) holds the sum
 * itself and is left out.
 *
 * The stream a transfer is filled with after its 32-byte header is splitmix64's seeded by
 * its tag: word j of it is mix(seed + (j + 1) φ), which any thread computes for its own j.
 * xsum_fill_word (write a word, return its term) and xsum_word (read one) are the very
 * per-word steps of the GPU's kernels and of payload.c; only the kernels' adding up of
 * the terms across threads is theirs alone.
 */
#ifndef OCTO_EXEC_XSUM_H
#define OCTO_EXEC_XSUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define XSUM_FN static inline __host__ __device__
#else
#define XSUM_FN static inline
#endif

#define XSUM_SKIP 3                              /* the word that holds the sum */
#define XSUM_HEADER_WORDS 4                      /* the stream starts at word 4 (byte 32) */
#define XSUM_PHI 0x9e3779b97f4a7c15ull
#define XSUM_K1 0xd1b54a32d192ed03ull
#define XSUM_K2 0x8cb92ba72f3d8dd7ull

/* splitmix64's finalizer: a bijection of 64-bit words. */
XSUM_FN uint64_t xsum_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Word j of the stream seeded by seed. */
XSUM_FN uint64_t xsum_stream(uint64_t seed, uint64_t j)
{
	return xsum_mix(seed + (j + 1) * XSUM_PHI);
}

/* Word i's term of the sum, its value w. */
XSUM_FN uint64_t xsum_term(uint64_t i, uint64_t w)
{
	return i == XSUM_SKIP ? 0 : xsum_mix(w ^ (i * XSUM_K1 + XSUM_K2));
}

/* The words of len bytes. */
XSUM_FN size_t xsum_words(size_t len)
{
	return (len + 7) / 8;
}

/* Word i of p[0 .. len), little-endian, zero past len. (On the GPU, which is
 * little-endian, a whole word of an 8-byte aligned p is one load.) */
XSUM_FN uint64_t xsum_word(const unsigned char *p, size_t len, size_t i)
{
	size_t at = 8 * i, n = len - at < 8 ? len - at : 8;
	uint64_t w = 0;

#ifdef __CUDA_ARCH__
	if (n == 8)
		return ((const uint64_t *)p)[i];
#endif
	for (size_t b = 0; b < n; b++)
		w |= (uint64_t)p[at + b] << (8 * b);
	return w;
}

/* Fills word i (>= XSUM_HEADER_WORDS) of a transfer of len bytes at p with word
 * i - XSUM_HEADER_WORDS of the stream of seed (its bytes within len) and returns its term
 * of the checksum: what the GPU's fill kernel does for every word after the header. */
XSUM_FN uint64_t xsum_fill_word(unsigned char *p, size_t len, uint64_t seed, size_t i)
{
	uint64_t w = xsum_stream(seed, i - XSUM_HEADER_WORDS);
	size_t at = 8 * i, n = len - at < 8 ? len - at : 8;

#ifdef __CUDA_ARCH__
	if (n == 8) {
		((uint64_t *)p)[i] = w;
		return xsum_term(i, w);
	}
#endif
	for (size_t b = 0; b < n; b++)
		p[at + b] = (unsigned char)(w >> (8 * b));
	if (n < 8)
		w &= (1ull << (8 * n)) - 1;
	return xsum_term(i, w);
}

/* The checksum of p[0 .. len). */
XSUM_FN uint64_t xsum(const unsigned char *p, size_t len)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < xsum_words(len); i++)
		sum += xsum_term(i, xsum_word(p, len, i));
	return sum;
}

#endif
