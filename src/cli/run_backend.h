/*
 * run_backend — the executor backends of octopipe run, as one table: the emulator (threads),
 * the emulator as MPI ranks, and the cuda backend (in octopipe-cuda; octopipe itself hands
 * a cuda run over to that program). octopipe run picks an entry by name and whether it
 * runs as ranks, and from then on only calls through it: which backends exist is decided
 * at build time here, and nowhere else.
 */
#ifndef OCTO_CLI_RUN_BACKEND_H
#define OCTO_CLI_RUN_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "calibrate.h"
#include "cost.h"
#include "err.h"
#include "exec/emu.h"
#include "exec/protocol.h"
#include "plan.h"
#include "timeline.h"

struct run_backend_opts {
	struct emu_opts eo;        /* the emulators' options; timeout and fault injection for all */
	double timeout_s;          /* the longest any wait may take (cuda: over a whole iteration) */
	double gemm_tflops;        /* cuda: the proxies' assumed throughput (0: fitted) */
	const struct work *works;  /* cuda: the layers' architecture (kplan_choose), or NULL: proxies */
	struct cost_opts kernel_opts; /* cuda: those kernels' sequence, micro-batch and TP degree */
	bool share_gpus;           /* cuda: several devices per GPU */
	int rank;                  /* as MPI ranks: this process's rank; else -1 */
};

struct run_backend {
	const char *name;          /* "emu", "cuda": as the option, reports and events name it */
	int ranks;                 /* RUN_THREADS, RUN_RANKS, or both (RUN_EITHER) */
	bool gpus;                 /* measures on GPUs (clocks a little apart, NVML samples) */
	const char *kernels;       /* what its ops run, as run --json says: "emulated"; NULL when
	                            * the plan decides (kplan_choose: "architecture" or "fitted") */
	/* Opens the backend for plan p and program x (both outlive it); *state is closed by
	 * close(). NULL when there is nothing to open. */
	int (*open)(void **state, const struct plan *p, const struct exec_program *x,
	            const struct run_backend_opts *o, struct err *e);
	/* One iteration (eo carries its number). */
	int (*run)(void *state, const struct plan *p, const struct exec_program *x, const struct emu_opts *eo,
	           struct timeline *t, struct err *e);
	/* As a rank that cannot even open: meets the others so that every rank stops with e
	 * (NULL: the backend's ranks need no such meeting). */
	void (*fail_ranks)(struct err *e);
	/* GPUs in use, device d's GPU (index, name) and its NVML sample; NULL without GPUs. */
	int (*gpu_count)(void *state);
	int (*gpu_of)(void *state, int d, const char **name);
	bool (*util)(void *state, int d, double *util, uint64_t *mem);
	void (*close)(void *state);
	/* octopipe calibrate --gpu: times the benches on the local GPU (cuda_bench.h); NULL
	 * for backends without GPUs. */
	int (*bench)(struct calib_bench *b, int n, int reps, const char **gpu_name, struct err *e);
	/* Set instead of the above when this program does not hold the backend: hands the whole
	 * command (run, or calibrate --gpu; argv[0] names it) over to the program that does;
	 * returns only on failure (an exit status). */
	int (*hand_over)(int argc, char **argv);
};

enum { RUN_THREADS = 1, RUN_RANKS = 2, RUN_EITHER = 3 };

/* The backend called name, as ranks or not; NULL with *why set when there is none
 * ("unknown backend", "not built", "needs MPI"): *why is a line fragment. */
const struct run_backend *run_backend_find(const char *name, bool ranks, const char **why);

/* MPI for a run as ranks: initialises it (*rank, *size), keeps quiet on ranks other than
 * 0 (their last word when the job must end still reaches the terminal), and ends it. The
 * deadline is the longest any collective may wait. Without MPI, init fails with e. */
int run_ranks_init(int *rank, int *size, struct err *e);
void run_ranks_deadline(double seconds);
void run_ranks_finalize(void);
bool run_ranks_built(void);
/* Ranks in the job when a launcher started this process (Open MPI, PMI, PMIx; 0 when
 * none did); *rank gets this process's rank. */
int run_ranks_launched(int *rank);

/* octopipe calibrate --gpu -o OUT MODEL... [--predict MODEL]... (calibrate_gpu.c): the
 * kernels of the fit models are benchmarked and fitted together (each model weighing the
 * same); every model, the predicted ones too, is re-priced with the fit into OUT (one
 * model: the file; several: a directory, as NAME.json). */
struct calib_gpu_args {
	const char *const *fit;      /* the models benchmarked, as given */
	int nfit;
	const char *const *predict;  /* the models only re-priced */
	int npredict;
	const char *out;
	bool json, emulate;
	int reps;
};
/* argc/argv are the command's, for a hand-over to the program that holds the cuda
 * backend; an exit status. */
int calibrate_gpu(int argc, char **argv, const struct calib_gpu_args *g);
/* octopipe calibrate --gpu --ceilings (calibrate_gpu.c): the GPU's kernel ceilings, a table. */
int calibrate_ceilings(int argc, char **argv, bool json, int reps, bool emulate);

/* octopipe run --backend cuda --dry-run (run_dry.c): the kernels the cuda backend would
 * launch for every op of the plan at arg, as a table or JSON; an exit status. */
int run_dry(const char *arg, bool json, double gemm_tflops, bool fit);

#endif
