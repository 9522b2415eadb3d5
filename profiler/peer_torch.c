/* PyTorch as a reference peer, run through scripts/peers/torch_spmm.py (peer_torch.h). */
#include "profiler/peer_torch.h"
#include "base/infile.h"
#include "base/near_exe.h"
#include "base/safe_text.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "profiler/loaders.h"
#include "profiler/peer_torch_paths.h"  /* generated: SPP_PEER_TORCH_SOURCE_ROOT, _DATADIR */

extern char **environ;

#define SCRIPT_REL "scripts/peers/torch_spmm.py"
#define SCRIPT_SHARE "share/spprof/peers/torch_spmm.py"
#define EXIT_NO_TORCH 77
#define REF_COLUMNS 8
#define RTOL 1e-4
#define ATOL 1e-6
/* torch's import and two warm-ups of a large layer come on top of the budget */
#define DEADLINE_BASE_S 300.0
#define DEADLINE_PER_BUDGET 20.0
#define MAX_JSON_BYTES (1 << 20)

static const char *const op_names[SPP_PEER_TORCH_NOPS] = {"torch_csr", "torch_dense"};

/* The per-call scratch: the private folder and what is in it. */
struct peer_dir {
	char path[PATH_MAX];
	int made;
};

int spp_peer_torch_script(char *out, size_t size, struct spp_error *err)
{
	static const char *const rel[] = {SCRIPT_REL, SCRIPT_SHARE};
	char exe[PATH_MAX], cwd[PATH_MAX];

	if (spp_find_near_exe(rel, 2, 0, out, size, exe, cwd) ||
	    spp_path_at(SPP_PEER_TORCH_SOURCE_ROOT, SCRIPT_REL, 0, out, size) ||
	    spp_path_at(SPP_PEER_TORCH_DATADIR, "peers/torch_spmm.py", 0, out, size))
		return SPP_OK;
	if (size)
		out[0] = '\0';
	return spp_error_set(err, SPP_E_UNSUPPORTED,
			     "torch peer script not found: looked for %s from the folders above '%s' "
			     "(up to %d levels), the current folder '%s' and '%s'",
			     SCRIPT_REL, exe, SPP_NEAR_EXE_UP + 1, cwd, SPP_PEER_TORCH_SOURCE_ROOT);
}

void spp_peer_torch_python(char *out, size_t size)
{
	const char *env = getenv("SPPROF_PYTHON");

	if (env && *env)
		snprintf(out, size, "%s", env);
	else if (access("/usr/bin/python3", X_OK) == 0)
		snprintf(out, size, "/usr/bin/python3");
	else
		snprintf(out, size, "python3");
}

/* A little-endian fp32 .npy (version 1.0, C order) of rows x cols. */
static int write_npy(const char *path, int64_t rows, int64_t cols, const float *v,
		     struct spp_error *err)
{
	char dict[128];
	unsigned char pre[10];
	size_t len, hlen, total = (size_t)rows * (size_t)cols, done = 0;
	FILE *f;
	int ok;

	/* the dict padded with spaces and a newline: data starts at 64 bytes' multiple */
	len = (size_t)snprintf(dict, sizeof(dict),
			       "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, %lld), }",
			       (long long)rows, (long long)cols);
	hlen = (10 + len + 1 + 63) / 64 * 64 - 10;
	memcpy(pre, "\x93NUMPY\x01\x00", 8);
	pre[8] = (unsigned char)(hlen & 0xff);
	pre[9] = (unsigned char)(hlen >> 8);
	f = fopen(path, "wb");
	if (!f)
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", path, strerror(errno));
	ok = fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, len, f) == len;
	for (size_t i = len; ok && i + 1 < hlen; i++)
		ok = fputc(' ', f) != EOF;
	ok = ok && fputc('\n', f) != EOF;
	while (ok && done < total) {
		size_t chunk = total - done < ((size_t)1 << 24) ? total - done : ((size_t)1 << 24);

		ok = fwrite(v + done, sizeof(float), chunk, f) == chunk;
		done += chunk;
	}
	if (fclose(f) != 0)
		ok = 0;
	if (!ok)
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", path,
				     errno ? strerror(errno) : "short write");
	return SPP_OK;
}

static int make_dir(struct peer_dir *d, struct spp_error *err)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(d->path, sizeof(d->path), "%s/spprof-torch-XXXXXX", tmp) >=
	    sizeof(d->path))
		return spp_error_set(err, SPP_E_OUTPUT, "temporary folder path too long under '%s'", tmp);
	if (!mkdtemp(d->path))
		return spp_error_set(err, SPP_E_OUTPUT, "cannot create a temporary folder under '%s': %s",
				     tmp, strerror(errno));
	d->made = 1;
	return SPP_OK;
}

/* The script writes plain files only: unlink each, then the folder. */
static void remove_dir(struct peer_dir *d)
{
	DIR *dir;
	struct dirent *e;
	char p[PATH_MAX + 256];

	if (!d->made)
		return;
	dir = opendir(d->path);
	if (dir) {
		while ((e = readdir(dir)))
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
			    (size_t)snprintf(p, sizeof(p), "%s/%s", d->path, e->d_name) < sizeof(p))
				unlink(p);
		closedir(dir);
	}
	rmdir(d->path);
	d->made = 0;
}

static void join(char *out, size_t n, const struct peer_dir *d, const char *name)
{
	snprintf(out, n, "%s/%s", d->path, name);
}

/* The last non-empty line of the script's output, control characters as '?'. */
static void last_line(const char *path, char *out, size_t n)
{
	char buf[4096];
	size_t len = 0;
	FILE *f = spp_infile_fopen(path, NULL);
	char *end, *start;

	snprintf(out, n, "no output");
	if (!f)
		return;
	if (fseek(f, 0, SEEK_END) == 0) {
		long size = ftell(f);

		if (size > (long)sizeof(buf) - 1)
			fseek(f, size - (long)sizeof(buf) + 1, SEEK_SET);
		else
			rewind(f);
		len = fread(buf, 1, sizeof(buf) - 1, f);
	}
	fclose(f);
	buf[len] = '\0';
	end = buf + len;
	while (end > buf && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		*--end = '\0';
	if (end == buf)
		return;
	start = end;
	while (start > buf && start[-1] != '\n')
		start--;
	spp_safe_copy(out, n, start, (size_t)-1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wait for pid until deadline_s; kill it past that. *status as waitpid's; 1 when killed. */
static int wait_child(pid_t pid, double deadline_s, int *status)
{
	const struct timespec tick = {0, 10 * 1000 * 1000};

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR) {
			*status = -1;
			return 0;
		}
		if (now_s() > deadline_s) {
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			return 1;
		}
		nanosleep(&tick, NULL);
	}
}

/*
 * Whether prog can be executed: a path as it is, a bare name along PATH.
 * Checked before spawning, since where posix_spawn forks and then execs
 * (valgrind, other libcs) a missing program only shows as exit 127.
 */
static int can_exec(const char *prog, int *why)
{
	const char *path = getenv("PATH"), *p;
	char buf[PATH_MAX];

	*why = ENOENT;
	if (strchr(prog, '/')) {
		if (access(prog, X_OK) == 0)
			return 1;
		*why = errno;
		return 0;
	}
	for (p = path && *path ? path : "/usr/bin:/bin"; *p; p += *p == ':') {
		size_t len = strcspn(p, ":");

		if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? p : ".", prog) <
			    sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return 1;
		p += len;
	}
	return 0;
}

/* posix_spawn the script, output into d/log.txt; 0 and *pid or the spawn's error. */
static int spawn_script(const struct spp_peer_torch *o, const struct peer_dir *d, int threads,
			double budget_s, pid_t *pid, struct spp_error *err)
{
	char wp[PATH_MAX + 16], xp[PATH_MAX + 16], log[PATH_MAX + 16], th[24], bu[32];
	char *argv[] = {(char *)o->python, (char *)o->script, wp, xp, (char *)"--threads", th,
			(char *)"--budget", bu, (char *)"--out", (char *)d->path, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, def;
	int rc, why;

	join(wp, sizeof(wp), d, "w.npy");
	join(xp, sizeof(xp), d, "x.npy");
	join(log, sizeof(log), d, "log.txt");
	snprintf(th, sizeof(th), "%d", threads);
	snprintf(bu, sizeof(bu), "%.17g", budget_s);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	/* the caller's blocked or ignored signals are not the script's */
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGTERM);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (can_exec(o->python, &why))
		rc = posix_spawnp(pid, o->python, &fa, &at, argv, environ);
	else
		rc = why;
	posix_spawnattr_destroy(&at);
	posix_spawn_file_actions_destroy(&fa);
	if (rc == ENOENT || rc == EACCES || rc == ENOEXEC)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "torch peer: cannot run python '%s': %s",
				     o->python, strerror(rc));
	if (rc)
		return spp_error_set(err, SPP_E_RUNTIME, "torch peer: cannot start '%s': %s",
				     o->python, strerror(rc));
	return SPP_OK;
}

/* Run the script to its end; 0 when it exited 0, else the status with its last line. */
static int run_script(const struct spp_peer_torch *o, const struct peer_dir *d, int threads,
		      double budget_s, struct spp_error *err)
{
	char log[PATH_MAX + 16], line[200];
	pid_t pid;
	int status = 0, killed, rc;
	double limit = DEADLINE_BASE_S + DEADLINE_PER_BUDGET * budget_s;

	rc = spawn_script(o, d, threads, budget_s, &pid, err);
	if (rc)
		return rc;
	killed = wait_child(pid, now_s() + limit, &status);
	join(log, sizeof(log), d, "log.txt");
	last_line(log, line, sizeof(line));
	if (killed)
		return spp_error_set(err, SPP_E_RUNTIME, "torch peer: '%s' did not finish in %.0f s: killed",
				     o->script, limit);
	if (status == -1)
		return spp_error_set(err, SPP_E_RUNTIME, "torch peer: lost the process of '%s'",
				     o->script);
	if (WIFSIGNALED(status))
		return spp_error_set(err, SPP_E_RUNTIME, "torch peer: '%s' killed by signal %d: %s",
				     o->script, WTERMSIG(status), line);
	if (WEXITSTATUS(status) == EXIT_NO_TORCH)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "%s", line);
	if (WEXITSTATUS(status) != 0)
		return spp_error_set(err, SPP_E_RUNTIME, "torch peer: '%s' exited with status %d: %s",
				     o->script, WEXITSTATUS(status), line);
	return SPP_OK;
}

static int bad_json(struct spp_error *err, const char *what)
{
	return spp_error_set(err, SPP_E_RUNTIME, "torch peer: result.json: %s", what);
}

/* A number member of obj into *v; 0, or the error naming it. */
static int json_number(const cJSON *obj, const char *op, const char *key, double *v,
		       struct spp_error *err)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsNumber(j) || !isfinite(j->valuedouble))
		return spp_error_set(err, SPP_E_RUNTIME,
				     "torch peer: result.json: %s%s'%s' is missing or not a number",
				     op ? op : "", op ? ": " : "", key);
	*v = j->valuedouble;
	return SPP_OK;
}

static int parse_op(const cJSON *doc, int i, struct spp_peer_torch_op *op, struct spp_error *err)
{
	const cJSON *ops = cJSON_GetObjectItemCaseSensitive(doc, "ops");
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(ops, op_names[i]);
	const cJSON *call = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(doc, "call"), op_names[i]);
	const char *keys[] = {"median_ns", "p10_ns", "p90_ns", "runs"};
	double *dst[] = {&op->median_ns, &op->p10_ns, &op->p90_ns, NULL}, runs = 0;

	snprintf(op->name, sizeof(op->name), "%s", op_names[i]);
	snprintf(op->call, sizeof(op->call), "%s", cJSON_IsString(call) ? call->valuestring : "?");
	if (!cJSON_IsObject(o))
		return spp_error_set(err, SPP_E_RUNTIME, "torch peer: result.json: no op '%s'",
				     op_names[i]);
	for (int j = 0; j < 4; j++) {
		int rc = json_number(o, op_names[i], keys[j], dst[j] ? dst[j] : &runs, err);

		if (rc)
			return rc;
	}
	if (runs < 1 || runs > INT_MAX)
		return bad_json(err, "a run count out of range");
	op->runs = (int)runs;
	return SPP_OK;
}

/* result.json into out (its ops' times; verification comes later). */
static int read_result(const struct peer_dir *d, struct spp_peer_torch *out, struct spp_error *err)
{
	char path[PATH_MAX + 16];
	struct spp_mapped_file f = {0};
	cJSON *doc = NULL;
	const cJSON *v;
	double threads;
	int rc;

	join(path, sizeof(path), d, "result.json");
	if (spp_mapfile_open(path, &f, NULL))
		return bad_json(err, "not written");
	if (f.size == 0 || f.size > MAX_JSON_BYTES) {
		rc = bad_json(err, "empty or too large");
		goto done;
	}
	doc = cJSON_ParseWithLength((const char *)f.base, (size_t)f.size);
	if (!cJSON_IsObject(doc)) {
		rc = bad_json(err, "not a JSON object");
		goto done;
	}
	v = cJSON_GetObjectItemCaseSensitive(doc, "torch_version");
	snprintf(out->torch_version, sizeof(out->torch_version), "%s",
		 cJSON_IsString(v) ? v->valuestring : "?");
	v = cJSON_GetObjectItemCaseSensitive(doc, "mkldnn");
	out->mkldnn = cJSON_IsTrue(v);
	rc = json_number(doc, NULL, "threads", &threads, err);
	if (rc)
		goto done;
	out->threads = threads >= 1 && threads <= INT_MAX ? (int)threads : 0;
	for (int i = 0; i < SPP_PEER_TORCH_NOPS && !rc; i++)
		rc = parse_op(doc, i, &out->ops[i], err);
done:
	cJSON_Delete(doc);
	spp_mapfile_close(&f);
	return rc;
}

/* The reference on the checked columns: ys = W xs, bs = |W| |xs|; xs K x c. */
struct ref_cols {
	int64_t cols[REF_COLUMNS];
	int64_t c;
	float *xs, *ys, *bs;
};

static int ref_init(struct ref_cols *r, const struct spp_matrix *w, const float *x, int64_t n,
		    struct spp_error *err)
{
	int64_t m = w->m, k = w->k;

	r->c = n < REF_COLUMNS ? n : REF_COLUMNS;
	for (int64_t s = 0; s < r->c; s++)
		r->cols[s] = r->c > 1 ? s * (n - 1) / (r->c - 1) : 0;
	r->xs = malloc(sizeof(float) * (size_t)(k * r->c > 0 ? k * r->c : 1));
	r->ys = malloc(sizeof(float) * (size_t)(m * r->c > 0 ? m * r->c : 1));
	r->bs = malloc(sizeof(float) * (size_t)(m * r->c > 0 ? m * r->c : 1));
	if (!r->xs || !r->ys || !r->bs)
		return spp_error_set(err, SPP_E_NOMEM, "torch peer: out of memory for the check");
	for (int64_t i = 0; i < k; i++)
		for (int64_t s = 0; s < r->c; s++)
			r->xs[i * r->c + s] = x[i * n + r->cols[s]];
	spp_reference_gemm(w, r->xs, r->ys, r->c);
	/* the error scale |W|.|X| in double, without a copy of |W|: its zeros are skipped */
	for (int64_t i = 0; i < m; i++) {
		double acc[REF_COLUMNS] = {0};

		for (int64_t kk = 0; kk < k; kk++) {
			double a = fabs((double)w->v[i * k + kk]);

			if (a != 0)
				for (int64_t s = 0; s < r->c; s++)
					acc[s] += a * fabs((double)r->xs[kk * r->c + s]);
		}
		for (int64_t s = 0; s < r->c; s++)
			r->bs[i * r->c + s] = (float)acc[s];
	}
	return SPP_OK;
}

static void ref_free(struct ref_cols *r)
{
	free(r->xs), free(r->ys), free(r->bs);
}

/* One op's Y (d/y_<op>.npy, m x n fp32) against the reference columns. */
static int check_y(const struct peer_dir *d, struct spp_peer_torch_op *op, const struct ref_cols *r,
		   int64_t m, int64_t n, struct spp_error *err)
{
	char path[PATH_MAX + 48], name[48];
	struct spp_model *y = NULL;
	struct spp_error lerr = {0};
	const struct spp_tensor *t;

	snprintf(name, sizeof(name), "y_%s.npy", op->name);
	join(path, sizeof(path), d, name);
	if (spp_load_npy(path, &y, &lerr))
		return spp_error_set(err, SPP_E_RUNTIME, "torch peer: %s: %s", name, lerr.msg);
	t = y->ntensors == 1 ? &y->tensors[0] : NULL;
	if (!t || t->dtype != SPP_DTYPE_F32 || t->ndim != 2 || t->shape[0] != m ||
	    t->shape[1] != n) {
		spp_model_destroy(y);
		return spp_error_set(err, SPP_E_RUNTIME, "torch peer: %s is not a %lld x %lld fp32 array",
				     name, (long long)m, (long long)n);
	}
	op->verified = 1;
	op->max_error = 0;
	for (int64_t i = 0; i < m; i++)
		for (int64_t s = 0; s < r->c; s++) {
			float v;
			double ref = r->ys[i * r->c + s], b = r->bs[i * r->c + s], diff, rel;

			memcpy(&v, t->data + 4 * (size_t)(i * n + r->cols[s]), sizeof(v));
			diff = fabs((double)v - ref);
			if (!(diff <= RTOL * b + ATOL))
				op->verified = 0;
			rel = b > 0 ? diff / b : (diff > 0 || isnan(diff) ? INFINITY : 0);
			if (isnan(rel) || rel > op->max_error)
				op->max_error = isnan(rel) ? INFINITY : rel;
		}
	spp_model_destroy(y);
	return SPP_OK;
}

static int check_args(const struct spp_matrix *w, const float *x, int64_t n, int threads,
		      double budget_s, struct spp_error *err)
{
	if (!w || !w->v || !x || w->m < 1 || w->k < 1 || n < 1)
		return spp_error_set(err, SPP_E_USAGE, "torch peer: W and X must be non-empty");
	if (threads < 1)
		return spp_error_set(err, SPP_E_USAGE, "torch peer: threads must be at least 1, not %d",
				     threads);
	if (!(budget_s > 0 && budget_s < 1e6))
		return spp_error_set(err, SPP_E_USAGE, "torch peer: budget must be positive seconds");
	return SPP_OK;
}

int spp_peer_torch_run(const struct spp_matrix *w, const float *x, int64_t n, int threads,
		       double budget_s, struct spp_peer_torch *out, struct spp_error *err)
{
	struct peer_dir d = {.made = 0};
	struct ref_cols r = {.xs = NULL, .ys = NULL, .bs = NULL};
	char path[PATH_MAX + 16];
	int rc;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < SPP_PEER_TORCH_NOPS; i++) {
		snprintf(out->ops[i].name, sizeof(out->ops[i].name), "%s", op_names[i]);
		out->ops[i].median_ns = out->ops[i].p10_ns = out->ops[i].p90_ns = NAN;
		out->ops[i].max_error = NAN;
	}
	rc = check_args(w, x, n, threads, budget_s, err);
	if (rc)
		return rc;
	spp_peer_torch_python(out->python, sizeof(out->python));
	rc = spp_peer_torch_script(out->script, sizeof(out->script), err);
	if (rc)
		return rc;
	rc = make_dir(&d, err);
	if (rc)
		goto done;
	join(path, sizeof(path), &d, "w.npy");
	rc = write_npy(path, w->m, w->k, w->v, err);
	join(path, sizeof(path), &d, "x.npy");
	rc = rc ? rc : write_npy(path, w->k, n, x, err);
	rc = rc ? rc : run_script(out, &d, threads, budget_s, err);
	rc = rc ? rc : read_result(&d, out, err);
	rc = rc ? rc : ref_init(&r, w, x, n, err);
	for (int i = 0; i < SPP_PEER_TORCH_NOPS && !rc; i++)
		rc = check_y(&d, &out->ops[i], &r, w->m, n, err);
done:
	ref_free(&r);
	remove_dir(&d);
	return rc;
}
