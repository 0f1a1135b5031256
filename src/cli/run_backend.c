/*
 * run_backend — the table of executor backends (see run_backend.h). Each entry adapts one
 * engine interface (emu.h, emu_mpi.h, cuda_exec.h) to the table's; the build decides
 * which entries exist, so this is the one file of octopipe run with conditional code.
 */
#include "config.h"
#include "cli/run_backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#ifdef OCTO_CUDA_BACKEND
#include "exec/cuda_bench.h"
#include "exec/cuda_exec.h"
#endif
#ifdef HAVE_MPI
#include "exec/emu_mpi.h"
#include "exec/world.h"
#endif

/* ---- the emulator, as threads ---------------------------------------------------- */

static int emu_iterate(void *state, const struct plan *p, const struct exec_program *x, const struct emu_opts *eo,
                       struct timeline *t, struct err *e)
{
	(void)state;
	return emu_run(p, x, eo, t, e);
}

/* ---- the emulator, as MPI ranks --------------------------------------------------- */

#ifdef HAVE_MPI
static int emu_mpi_iterate(void *state, const struct plan *p, const struct exec_program *x,
                           const struct emu_opts *eo, struct timeline *t, struct err *e)
{
	(void)state;
	return emu_mpi_run(p, x, eo, t, e);
}
#endif

/* ---- the cuda backend, in octopipe-cuda ------------------------------------------- */

#ifdef OCTO_CUDA_BACKEND
static int cuda_open(void **state, const struct plan *p, const struct exec_program *x,
                     const struct run_backend_opts *o, struct err *e)
{
	struct cuda_exec_opts co;
	struct cuda_exec *c = NULL;

	cuda_exec_opts_default(&co);
	co.timeout_s = o->timeout_s;
	co.gemm_tflops = o->gemm_tflops;
	co.works = o->works;
	co.kernel_opts = o->kernel_opts;
	co.share_gpus = o->share_gpus;
	co.kill_device = o->eo.kill_device;
	co.kill_after_ops = o->eo.kill_after_ops;
	co.misroute_xfer = o->eo.misroute_xfer;
	co.corrupt_xfer = o->eo.corrupt_xfer;
	co.rank = o->rank;
	if (cuda_exec_open(&c, p, x, &co, e) < 0)
		return -1;
	*state = c;
	return 0;
}

static int cuda_iterate(void *state, const struct plan *p, const struct exec_program *x, const struct emu_opts *eo,
                        struct timeline *t, struct err *e)
{
	(void)p;
	(void)x;
	(void)eo;
	return cuda_exec_run(state, t, e);
}

static void cuda_fail_ranks(struct err *e)
{
	cuda_exec_fail_ranks(e);
}

static int cuda_gpu_count(void *state)
{
	return cuda_exec_gpus(state);
}

static int cuda_gpu_of(void *state, int d, const char **name)
{
	*name = cuda_exec_gpu_name(state, d);
	return cuda_exec_gpu_of(state, d);
}

static bool cuda_util(void *state, int d, double *util, uint64_t *mem)
{
	return cuda_exec_util(state, d, util, mem);
}

static void cuda_close(void *state)
{
	cuda_exec_close(state);
}
#elif defined(HAVE_CUDA_EXEC)
/* Replaces this process with octopipe-cuda, installed next to octopipe, running the same
 * command: octopipe itself never loads the CUDA libraries (startup time, and machines
 * without a driver). Returns only on failure. */
static int cuda_hand_over(int argc, char **argv)
{
	char self[4096], path[4200], **args;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n <= 0) {
		cli_err("octopipe %s: cannot find the octopipe-cuda program (no /proc/self/exe)\n", argv[0]);
		return EXIT_RUNTIME;
	}
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/octopipe-cuda", self);
	args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args)
		return EXIT_RUNTIME;
	args[0] = path;
	for (int i = 0; i < argc; i++)
		args[i + 1] = argv[i];
	fflush(NULL);
	execv(path, args);
	cli_err("octopipe %s: cannot start the cuda backend '%s': %s\n", argv[0], path, strerror(errno));
	free(args);
	return EXIT_RUNTIME;
}
#endif

static const struct run_backend backends[] = {
	{ .name = "emu", .ranks = RUN_THREADS, .kernels = "emulated", .run = emu_iterate },
#ifdef HAVE_MPI
	{ .name = "emu", .ranks = RUN_RANKS, .kernels = "emulated", .run = emu_mpi_iterate },
#endif
#ifdef OCTO_CUDA_BACKEND
	{ .name = "cuda", .ranks = RUN_EITHER, .gpus = true, .open = cuda_open, .run = cuda_iterate,
	  .fail_ranks = cuda_fail_ranks, .gpu_count = cuda_gpu_count, .gpu_of = cuda_gpu_of, .util = cuda_util,
	  .close = cuda_close, .bench = cuda_bench_run },
#elif defined(HAVE_CUDA_EXEC)
	{ .name = "cuda", .ranks = RUN_EITHER, .gpus = true,
	  .hand_over = cuda_hand_over },
#endif
};

/* Every backend octopipe knows, built or not. */
static const char *const known[] = { "emu", "cuda", NULL };

const struct run_backend *run_backend_find(const char *name, bool ranks, const char **why)
{
	bool is_known = false;

	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (strcmp(backends[i].name, name) == 0 && (backends[i].ranks & (ranks ? RUN_RANKS : RUN_THREADS)))
			return &backends[i];
	for (int i = 0; known[i]; i++)
		is_known = is_known || strcmp(known[i], name) == 0;
	if (!is_known)
		*why = "unknown backend";
	else if (strcmp(name, "cuda") == 0)
		*why = "the cuda backend was not built (configure found no CUDA, NCCL and cuBLAS)";
	else
		*why = "this octopipe was built without MPI (configure --with-mpi)";
	return NULL;
}

/* ---- MPI for runs as ranks -------------------------------------------------------- */

#ifdef HAVE_MPI
/* Where the job's last word goes when a rank hangs or dies unnoticed (world.h): the real
 * stderr, kept aside by the ranks that keep quiet. */
static int job_stderr = 2;

static void job_fatal(const char *line)
{
	dprintf(job_stderr, "octopipe run: %s\n", line);
}

/* Ranks other than 0 keep quiet: rank 0 reports for the whole job. */
static void quiet(void)
{
	fflush(NULL);
	job_stderr = dup(2);
	if (job_stderr < 0)
		job_stderr = 2;
	if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
		return;
}

int run_ranks_init(int *rank, int *size, struct err *e)
{
	if (emu_mpi_init(rank, size, e) < 0)
		return -1;
	if (*rank != 0)
		quiet();
	world_on_fatal(job_fatal);
	return 0;
}

void run_ranks_deadline(double seconds)
{
	world_set_deadline(seconds);
}

void run_ranks_finalize(void)
{
	emu_mpi_finalize();
}

bool run_ranks_built(void)
{
	return true;
}
#else
int run_ranks_init(int *rank, int *size, struct err *e)
{
	*rank = 0;
	*size = 1;
	return err_set(e, ERR_INPUT, "this octopipe was built without MPI (configure --with-mpi)");
}

void run_ranks_deadline(double seconds)
{
	(void)seconds;
}

void run_ranks_finalize(void)
{
}

bool run_ranks_built(void)
{
	return false;
}
#endif

/* Ranks in the job when a launcher started this process (Open MPI, PMI, PMIx; 0 when
 * none did); *rank gets this process's rank. */
int run_ranks_launched(int *rank)
{
	static const char *const size_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL };
	static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL };
	const char *v;

	*rank = 0;
	for (int i = 0; rank_vars[i]; i++)
		if ((v = getenv(rank_vars[i])) != NULL) {
			*rank = atoi(v);
			break;
		}
	for (int i = 0; size_vars[i]; i++)
		if ((v = getenv(size_vars[i])) != NULL)
			return atoi(v);
	return getenv("PMIX_RANK") ? 1 : 0;
}
