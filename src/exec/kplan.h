/*
 * kplan — the kernel plan: what the cuda backend launches for each op of a plan, known
 * without a GPU, so that `octopipe run --backend cuda --dry-run` can list it and tests can
 * check it everywhere.
 *
 * When each layer's architecture is known (its struct work, cost.h), an op's kernels are
 * the cost model's kernel list of every layer of its stage (cost_kernels): the executor
 * launches what the prediction priced, kernel class by kernel class. Otherwise (a
 * profile-only model) an op runs a fitted proxy: one bf16 GEMM with the activation's
 * shape (tokens x hidden, the hidden size read from the stage's out_bytes) whose columns
 * give the FLOPs the op's predicted time represents at an assumed throughput (the
 * cluster's peak x its GEMM efficiency, or --gemm-tflops), repeated beyond
 * KPLAN_NCOLS_MAX columns. On a GPU the backend then times each proxy and refits its
 * columns (cuda_proxy.c).
 */
#ifndef OCTO_EXEC_KPLAN_H
#define OCTO_EXEC_KPLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "cost.h"
#include "err.h"
#include "plan.h"

#define KPLAN_NCOLS_MAX 8192   /* a longer proxy GEMM is repeated instead of widened */

/* A proxy GEMM: m x k times k x n, reps times (reps 0: the op has no work). */
struct kplan_gemm {
	int m, k, n, reps;
	double ms;                 /* the predicted time it stands for */
};

/* Columns and repetitions of an m x k proxy so that it does `flops` of work. */
void kplan_fit_columns(struct kplan_gemm *g, double flops);
/* The proxy of an op whose predicted time is ms at tflops, for tokens x out_bytes activations. */
struct kplan_gemm kplan_proxy(double ms, double tflops, long tokens, uint64_t out_bytes);
/* The proxy of stage s's op slot k (op_kind_slot) on its device, sized at gemm_tflops
 * (0: the cluster's peak x GEMM efficiency of the pass). */
struct kplan_gemm kplan_stage_proxy(const struct plan *p, int s, int k, double gemm_tflops);
/* The throughput stage proxies of slot k are sized for. */
double kplan_tflops(const struct plan *p, int k, double gemm_tflops);
/* FLOPs and HBM bytes (bf16 operands and result) of all of a proxy's repetitions. */
double kplan_gemm_flops(const struct kplan_gemm *g);
double kplan_gemm_bytes(const struct kplan_gemm *g);

/* The kernels of pass `pass` of stage s's layers in order (works: one per model layer),
 * as kplan_kernels. */
int kplan_stage_kernels(const struct plan *p, const struct work *works, const struct cost_opts *o, int s,
                        enum kernel_pass pass, struct kernel *out, int max);
/* The kernels of stage s's op slot k (op_kind_slot) into out (up to max; returns how many
 * there are, more than max when cut). With works (one per model layer: the architecture),
 * the cost model's kernel list of every layer of the stage in order, pass F, I or W (a
 * fused B is I then W), at o's sequence, micro-batch and TP degree; without, the stage's
 * fitted proxy as one kernel (its repetitions as groups, sized at gemm_tflops). */
int kplan_kernels(const struct plan *p, const struct work *works, const struct cost_opts *o, double gemm_tflops,
                  int s, int k, struct kernel *out, int max);

/*
 * An attention core on the cuda backend: its queries in blocks, each block a pair of
 * strided-batched GEMMs over the keys it attends to (QK^T, then PV; batched over heads and
 * sequences) with a masked softmax between them. A causal block attends to every key up
 * to its last query, a windowed one from its first query's window on: the GEMMs do the
 * masked part too, as a fused kernel's tiles do, so their FLOPs exceed the core's by
 * about a block over the context. Blocks are a multiple of 64 queries: a sixteenth of
 * the sequence, at most an eighth of a window (KPLAN_CORE_TILES blocks at most).
 */
#define KPLAN_CORE_TILES 64

struct kplan_tile {
	long q0, rows;             /* queries [q0, q0 + rows) of each sequence */
	long k0, keys;             /* attend to keys [k0, k0 + keys) */
	long ld;                   /* the scores' row stride: keys padded (kplan_ld) */
};

/*
 * Leading dimensions. Every GEMM the backend plans has leading dimensions (and the row
 * strides of the operands it slices) that are multiples of KPLAN_LD_ALIGN bf16 elements,
 * 16 bytes, cuBLAS's fast path: a windowed block's keys (rows + window - 1) are odd for
 * an even window, so its scores are stored with padded rows; a GEMM's m and k are rounded
 * up the same way in their operands' layout (the padding is allocated, never computed).
 */
#define KPLAN_LD_ALIGN 8

/* n rounded up to a multiple of KPLAN_LD_ALIGN. */
static inline long kplan_ld(long n)
{
	return (n + KPLAN_LD_ALIGN - 1) / KPLAN_LD_ALIGN * KPLAN_LD_ALIGN;
}

/* One planned cuBLAS call (column-major, cuBLAS's view): m x n = op(A) op(B), k deep. */
struct kplan_call {
	long m, n, k, lda, ldb, ldc;
	int batch;
};

/* A kernel-list GEMM's operands per group, in elements: X (m x k, leading dimension
 * ld[0]), W (k x n, ld[1]), Y (m x n, ld[2]); the group's slice of each buffer is its
 * ld x columns, so every group starts 16-byte aligned. */
void kplan_gemm_lds(const struct kernel *x, long ld[3]);
/* Elements of X, W, Y all groups of GEMM x occupy. */
void kplan_gemm_elems(const struct kernel *x, double elems[3]);
/* An attention core's row strides of Q and K (d_qk padded) and of V and O (d_v padded). */
void kplan_core_strides(const struct kernel *x, long *ldq, long *ldv);
/* Elements of one block's scores buffer for core x: heads x sequences x the largest block's
 * rows x its padded keys (once: the softmax works in place). */
double kplan_core_score_elems(const struct kernel *x);

/*
 * The SSD class (Mamba-2's chunked scan, Gated DeltaNet's chunks) is matmul work in the
 * runtimes the cost model prices it for (its efficiency is a fraction of the tensor-core
 * peak): its FLOPs run as one strided-batched bf16 GEMM of a chunk's shape (a 256 x 256
 * product of chunk x state, k deep; k grows past KPLAN_SSD_K when the batch would
 * outgrow KPLAN_SSD_BATCH), its bytes as memory-class kernels on the other launches.
 */
#define KPLAN_SSD_M 256
#define KPLAN_SSD_K 128
#define KPLAN_SSD_BATCH 512
/* The GEMM that does SSD kernel x's FLOPs (batch 0: none). */
struct kplan_call kplan_ssd_gemm(const struct kernel *x);
/* Bytes of the work buffer it needs: A and B (shared by the batch), then the batch's C. */
double kplan_ssd_bytes(const struct kernel *x);

/* The cuBLAS calls kernel x makes in pass p (as cuda_kernels.c makes them: a GEMM's per
 * group, a core's per block, an SSD's one) into out (up to max); how many there are. */
int kplan_calls(const struct kernel *x, enum kernel_pass p, struct kplan_call *out, int max);

/*
 * Expert parallelism is the cost model's (cost_opts.ep, which kplan_choose sets to the
 * plan's degree): a rank's lists hold its E / ep experts, each on the rows of ep ranks.
 */


/* The queries per block of core x. */
long kplan_core_block(const struct kernel *x);
/* The query blocks of core x (x->heads > 0) into out (KPLAN_CORE_TILES entries); how many. */
int kplan_core_tiles(const struct kernel *x, struct kplan_tile *out);
/* FLOPs of one forward pass of the tiles' GEMMs (QK^T and PV): 2 x rows x keys x (d_qk +
 * d_v) per head and sequence, summed. The backward does twice that (dP, dS K, dS^T Q, P^T dO). */
double kplan_core_gemm_flops(const struct kernel *x);

/*
 * Launches. The cost model charges each kernel its launches (struct kernel.launches) at
 * the fitted launch overhead; the cuda backend issues exactly those wherever it can, so
 * that a run and calibrate --gpu measure what the prediction charges: a GEMM is one
 * cuBLAS call per group (the routed experts' GEMMs one per expert, the loop of the
 * runtime the cost model was fitted to, 14.3 us each on an H200 profile, not one batched
 * call that would hide it), an entry that is neither a GEMM nor a core is as many
 * kernels as it stands for. The one exception is a fused attention core (FlashAttention:
 * one launch, two in the backward), which the backend has no single kernel for and runs
 * as its query blocks' GEMMs and softmax (kplan_core_tiles); calibrate --gpu fits the
 * launch overhead against the launches issued, so that those extra launches are counted
 * as launches and not as the core's efficiency.
 */
/* The launches the cuda backend issues for kernel x in pass p (built with nvcc). */
long kplan_launches(const struct kernel *x, enum kernel_pass p);

/* What the cuda backend's ops run, as every output of octopipe run names it. */
enum kplan_mode {
	KPLAN_ARCHITECTURE,  /* the layers' kernel lists, measured as they are */
	KPLAN_FITTED,        /* proxies sized (and, on a GPU, fitted) to the predicted times */
};

/* "architecture" or "fitted". */
const char *kplan_mode_name(enum kplan_mode m);

/* Warm-up iterations cuda_exec_open runs before the first measured one: one in every mode
 * (clocks, cuBLAS's algorithm choice, NCCL's connections and the allocator settle), two
 * when fitted proxies are refitted after each. */
int kplan_warm_ups(enum kplan_mode m, bool refit);

/*
 * NCCL. The channels are one communicator per directed pair of devices, not one per
 * process group. NCCL runs a communicator's operations one after the other in issue
 * order (it adds CUDA events), so on one communicator for all devices every send would
 * wait for each receive its device posted before it. The protocol's order is consistent
 * across devices, so that would not deadlock (test_protocol checks every schedule), but
 * it would add waits the prediction does not have: in a 1F1B program 22 of 48 sends would
 * queue behind a receive whose data is still in flight (test_protocol), where a channel
 * holds a send back only behind its own pair's earlier transfers. NCCL also refuses one
 * GPU twice in a communicator, which --share-gpus and ranks sharing a GPU need. Several
 * communicators are safe with care, which the backend takes: every NCCL kernel that can
 * be waiting on a GPU at once must be resident at once (CUDA gives no forward progress
 * otherwise), so each communicator's CTAs are capped so that all of a GPU's channels
 * together take at most half its SMs, and every stream gets its own hardware queue
 * (CUDA_DEVICE_MAX_CONNECTIONS), so that no channel's kernel queues behind another's.
 */
/* CTAs per communicator (ncclConfig_t.minCTAs and maxCTAs, the same on both ranks) when
 * the busiest GPU has `channels` channel ends on `sms` SMs: at most half the SMs in all,
 * at least 1, at most 16. */
int kplan_nccl_ctas(int sms, int channels);

/* The kernels of plan p's ops: the architecture of its model's layers unless fit asks for
 * proxies or the model has none (a profile-only table; *why then says so, a line
 * fragment, else it is NULL). In architecture mode *works gets one struct work per model
 * layer (caller frees) and o their sequence, micro-batch and TP degree (the plan's layout
 * wins); else *works is NULL. -1 with e set when the model's source is unreadable. */
int kplan_choose(const struct plan *p, bool fit, enum kplan_mode *mode, struct work **works,
                 struct cost_opts *o, const char **why, struct err *e);

/* What the plan's prediction prices that the cuda backend's architecture kernels do not
 * run, as a line fragment, or NULL: at tensor parallelism o->tp > 1 each pipeline rank
 * runs its 1/tp share of the kernels on one GPU, without the tensor-parallel all-reduces
 * (and the all-to-all) of its layers; at expert parallelism > 1, without the experts'
 * all-to-all; under ZeRO 3, without the weight gathers its ops wait for (one replica, no
 * data parallelism). A run compares its measurement with the plan priced without them
 * (plan_drop_collectives). */
const char *kplan_not_run(const struct plan *p, const struct work *works, const struct cost_opts *o);

#endif
