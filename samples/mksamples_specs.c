/*
 * mksamples_specs — the bundled models as mksamples builds them: each profile's layer
 * letters, what each letter is made of, where its W share comes from, and the public
 * architecture its memory is computed from (see mksamples.c).
 */
#include "config.h"
#include "mksamples.h"

#include <stddef.h>

const struct spec specs[] = {
	{
		.name = "nemotron-nano-v2-9b",
		.a = { .h = 4480, .vocab = 131072, .nq = 40, .nkv = 8, .dh = 128, .ffn = 15680,
		       .mheads = 128, .mhdim = 80, .groups = 8, .state = 128, .conv = 4, .chunk = 128 },
		.letters = {
			{ 'M', "mamba2", P_MAMBA2, { "nemotronh", TR_SECOND }, "mamba2 mixer" },
			{ '-', "mlp", P_MLP, { NULL, TR_LAYER }, "squared-relu mlp" },
			{ '*', "attention", P_ATTN, { "nemotronh", TR_LAYER }, "attention" },
		},
		.head = { "nemotronh", TR_HEAD },
		.known_params = 8.9e9,
		.known = "NVIDIA-Nemotron-Nano-9B-v2, ~8.9B",
	},
	{
		.name = "deepseek-16b",
		.a = { .h = 2048, .vocab = 102400, .nq = 16, .nkv = 16, .dh = 128, .ffn = 10944,
		       .experts = 64, .topk = 6, .fe = 1408, .fshared = 2 * 1408 },
		.letters = {
			{ 'D', "dense", P_ATTN | P_GLU, { "deepseek", TR_LAYER }, "attention + dense mlp" },
			{ 'M', "moe", P_ATTN | P_MOE, { "deepseek", TR_SECOND }, "attention + moe" },
		},
		.head = { "deepseek", TR_HEAD },
		.public_layout = DEEPSEEK_PUBLIC,
		.known_params = 16.4e9,
		.known = "deepseek-moe-16b, ~16.4B",
	},
	{
		.name = "gpt-oss-20b",
		.a = { .h = 2880, .vocab = 201088, .bias = true, .nq = 64, .nkv = 8, .dh = 64,
		       .sinks = true, .experts = 32, .topk = 4, .fe = 2880 },
		.letters = {
			{ 'F', "full-attn+moe", P_ATTN | P_MOE, { "deepseek", TR_SECOND }, "full attention + moe" },
			{ 'S', "swa+moe", P_ATTN | P_MOE, { "deepseek", TR_SECOND }, "sliding-window attention + moe" },
		},
		.head = { "deepseek", TR_HEAD },
		.known_params = 20.9e9,
		.known = "gpt-oss-20b, ~20.9B",
	},
	{
		.name = "gpt-13b",
		.a = { .h = 5120, .vocab = 51200, .pos_rows = 4096, .layernorm = true, .bias = true,
		       .nq = 40, .nkv = 40, .dh = 128, .ffn = 4 * 5120 },
		.letters = {
			{ 'T', "transformer", P_ATTN | P_MLP | P_GPT, { "gemma", TR_LAYER }, "transformer layer" },
		},
		.head = { "gemma", TR_HEAD },
		.known_params = 13e9,
		.known = "gpt-3 13b, ~13B",
	},
};
const int nspecs = (int)(sizeof(specs) / sizeof(specs[0]));
