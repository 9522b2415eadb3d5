/*
 * Scan benchmark: `spprof analyze --static` against a plain read pass over
 * the same mmap'd file, measured in the same run.
 *
 *   bench_scan MODEL [REPEATS]      (or MODEL from $SPP_BENCH_MODEL)
 *
 * Each measurement runs in a fresh child (fork), so that its peak RSS comes
 * from wait4()'s rusage and no run inherits another's mapped pages. The
 * pairs alternate (read, scan, read, scan, ...) so that machine noise hits
 * both. The read pass is what a loop can do with no analysis at all: two
 * OpenMP threads sum every 8-byte word of the mapping, dropping pages behind
 * them. The scan is spp_analyze_run() with static_only and 2 threads (the
 * whole job: load, count every layer, model totals, hash).
 *
 * Targets (the issue's): scan rate >= 50 % of the read rate (medians), and
 * the scan's peak RSS < 2 x the largest tensor + 100 MB. Exit 0 when both
 * are met, 1 when one is missed, 2 on error, 77 (skip) without a model.
 */
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profiler/analyze.h"
#include "profiler/loaders.h"

#define THREADS 2
#define READ_CHUNK ((size_t)4 << 20)

struct run {
	double secs;
	long maxrss_kb;
	char note[200];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Child: the plain read pass. Writes the sum to fd so it is not optimised out. */
static int child_read(const char *path, int fd)
{
	struct stat st;
	unsigned char *p;
	uint64_t sum = 0;
	size_t n, nchunks;
	int f = open(path, O_RDONLY);

	if (f < 0 || fstat(f, &st) != 0)
		return 2;
	n = (size_t)st.st_size;
	p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, f, 0);
	close(f);
	if (p == MAP_FAILED)
		return 2;
	nchunks = (n + READ_CHUNK - 1) / READ_CHUNK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(THREADS) reduction(+:sum)
	for (size_t c = 0; c < nchunks; c++) {
		size_t s = c * READ_CHUNK, e = s + READ_CHUNK < n ? s + READ_CHUNK : n;
		uint64_t acc = 0;

		for (size_t i = s; i + 8 <= e; i += 8) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			acc += w;
		}
		sum += acc;
		madvise(p + s, e - s, MADV_DONTNEED);
	}
	munmap(p, n);
	dprintf(fd, "word sum %016llx", (unsigned long long)sum);
	return 0;
}

/* Child: the static analysis, as `spprof analyze --static --threads 2`. */
static int child_scan(const char *path, int fd)
{
	struct spp_analyze_opts o;
	struct spp_analysis *a = NULL;
	struct spp_error err = {0};
	int rc;

	spp_analyze_opts_init(&o);
	o.static_only = 1;
	o.threads = THREADS;
	rc = spp_analyze_run(path, &o, &a, &err);
	if (rc) {
		dprintf(fd, "error: %s", err.msg);
		return 2;
	}
	dprintf(fd, "%d layers, nnz %llu of %llu, hash %s %s", a->nlayers,
		(unsigned long long)a->totals.nnz,
		(unsigned long long)a->totals.params, a->totals.hash.algo,
		a->totals.hash.hex);
	spp_analysis_destroy(a);
	return 0;
}

static int measure(int (*fn)(const char *, int), const char *path, struct run *r)
{
	struct rusage ru;
	int pfd[2], status;
	double t0;
	pid_t pid;
	ssize_t got;

	if (pipe(pfd) != 0)
		return -1;
	t0 = now();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(pfd[0]);
		_exit(fn(path, pfd[1]));
	}
	close(pfd[1]);
	if (wait4(pid, &status, 0, &ru) != pid)
		return -1;
	r->secs = now() - t0;
	r->maxrss_kb = ru.ru_maxrss;
	got = read(pfd[0], r->note, sizeof(r->note) - 1);
	r->note[got > 0 ? got : 0] = '\0';
	close(pfd[0]);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench_scan: child failed (%s)\n", r->note);
		return -1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(const struct run *r, int n)
{
	double v[64];

	for (int i = 0; i < n; i++)
		v[i] = r[i].secs;
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void loadavg(char *buf, size_t n)
{
	FILE *f = fopen("/proc/loadavg", "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)n, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : getenv("SPP_BENCH_MODEL");
	int reps = argc > 2 ? atoi(argv[2]) : 3;
	struct run rd[32], sc[32], warm;
	struct spp_model *m = NULL;
	struct spp_error err = {0};
	uint64_t bytes, largest = 0;
	double gb, read_gbs, scan_gbs, ratio, limit_mb, peak_mb = 0;
	char load0[128], load1[128];
	int ok_rate, ok_rss;

	if (!path || !*path) {
		fprintf(stderr, "bench_scan: no model: give a path or set SPP_BENCH_MODEL "
			"(scripts/bench-scan makes a 2 GB one)\n");
		return 77;
	}
	if (reps < 1 || reps > 32)
		reps = 3;
	/* sizes only: the parent never touches the weights, so the children
	 * start with a small RSS */
	if (spp_model_open(path, &m, &err) != 0) {
		fprintf(stderr, "bench_scan: %s\n", err.msg);
		return 2;
	}
	bytes = m->bytes;
	for (int i = 0; i < m->ntensors; i++)
		if (m->tensors[i].nbytes > largest)
			largest = m->tensors[i].nbytes;
	printf("model       %s\n", path);
	printf("bytes       %llu (%.3f GB), %d tensors, largest %llu bytes\n",
	       (unsigned long long)bytes, bytes / 1e9, m->ntensors,
	       (unsigned long long)largest);
	spp_model_destroy(m);
	gb = (double)bytes / 1e9;
	limit_mb = (2.0 * (double)largest + 100e6) / 1e6;

	loadavg(load0, sizeof(load0));
	printf("threads     %d; load average before: %s\n", THREADS, load0);
	if (measure(child_read, path, &warm) != 0)
		return 2;
	printf("warm-up     read %.3f s (page cache filled)\n", warm.secs);
	for (int i = 0; i < reps; i++) {
		if (measure(child_read, path, &rd[i]) != 0 ||
		    measure(child_scan, path, &sc[i]) != 0)
			return 2;
		printf("pair %d      read %.3f s %6.2f GB/s rss %6.1f MB | "
		       "scan %.3f s %6.2f GB/s rss %6.1f MB | ratio %.3f\n",
		       i + 1, rd[i].secs, gb / rd[i].secs, rd[i].maxrss_kb / 1024.0,
		       sc[i].secs, gb / sc[i].secs, sc[i].maxrss_kb / 1024.0,
		       rd[i].secs / sc[i].secs);
		if (sc[i].maxrss_kb / 1024.0 * 1.048576 > peak_mb)
			peak_mb = sc[i].maxrss_kb / 1024.0 * 1.048576;
	}
	loadavg(load1, sizeof(load1));
	printf("scan result %s\n", sc[0].note);
	read_gbs = gb / median(rd, reps);
	scan_gbs = gb / median(sc, reps);
	ratio = scan_gbs / read_gbs;
	ok_rate = ratio >= 0.5;
	ok_rss = peak_mb < limit_mb;
	printf("median      read %.2f GB/s, scan %.2f GB/s\n", read_gbs, scan_gbs);
	printf("rate        scan/read %.3f (target >= 0.500)  %s\n", ratio,
	       ok_rate ? "PASS" : "MISS");
	printf("peak rss    %.1f MB (target < 2 x %.1f MB + 100 MB = %.1f MB)  %s\n",
	       peak_mb, largest / 1e6, limit_mb, ok_rss ? "PASS" : "MISS");
	printf("load average after: %s\n", load1);
	return ok_rate && ok_rss ? 0 : 1;
}
