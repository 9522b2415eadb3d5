/*
 * The probe of a dense candidate: the library loaded and one small GEMM
 * checked in a fresh child process (posix_spawn of the binary itself),
 * so that a library that crashes, hangs or computes wrong on this CPU
 * never reaches the measuring process.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "kernels/dense/dense_impl.h"

/* A probe that has not answered in this long is hung: killed, reported failed. */
#define PROBE_TIMEOUT_MS 60000

static uint64_t probe_rng(uint64_t *s)
{
	*s = *s * 6364136223846793005u + 1442695040888963407u;
	return *s >> 33;
}

/*
 * A GEMM with ragged sizes and a GEMV on 1 and 2 threads against the
 * double-precision reference. 0, or -1 with why.
 */
static int probe_check(const struct spp_dense_cand *c, char *why, size_t n)
{
	static const int64_t shapes[][3] = {{67, 45, 33}, {129, 70, 1}, {16, 300, 64}};
	uint64_t seed = 7;

	for (size_t s = 0; s < sizeof(shapes) / sizeof(*shapes); s++) {
		int64_t m = shapes[s][0], k = shapes[s][1], nn = shapes[s][2];
		float *w = malloc(sizeof(float) * (size_t)(m * k)), *x = malloc(sizeof(float) * (size_t)(k * nn));
		float *y = malloc(sizeof(float) * (size_t)(m * nn)), *r = malloc(sizeof(float) * (size_t)(m * nn));
		struct spp_matrix wm = {m, k, w};
		int bad = 0;

		if (!w || !x || !y || !r) {
			snprintf(why, n, "out of memory");
			bad = 1;
		}
		for (int64_t i = 0; !bad && i < m * k; i++)
			w[i] = (float)((int)(probe_rng(&seed) % 17) - 8) / 8.0f;
		for (int64_t i = 0; !bad && i < k * nn; i++)
			x[i] = (float)((int)(probe_rng(&seed) % 17) - 8) / 8.0f;
		if (!bad)
			spp_reference_gemm(&wm, x, r, nn);
		for (int t = 1; !bad && t <= 2; t++) {
			for (int64_t i = 0; i < m * nn; i++)
				y[i] = NAN;
			c->lib->gemm(c, &wm, x, y, nn, t);
			/* small multiples of 1/8: every partial sum is exact in fp32 */
			for (int64_t i = 0; i < m * nn && !bad; i++)
				if (!(fabsf(y[i] - r[i]) <= 1e-3f * (1.0f + fabsf(r[i])))) {
					snprintf(why, n, "wrong result in a %lldx%lldx%lld probe on %d thread%s "
						 "(%g where %g is right)", (long long)m, (long long)k,
						 (long long)nn, t, t == 1 ? "" : "s", (double)y[i], (double)r[i]);
					bad = 1;
				}
		}
		free(w), free(x), free(y), free(r);
		if (bad)
			return -1;
	}
	return 0;
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGILL: return "SIGILL: an instruction this CPU does not have";
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGABRT: return "SIGABRT: the library aborted";
	case SIGFPE: return "SIGFPE";
	case SIGKILL: return "SIGKILL: hung, killed";
	default: return "a signal";
	}
}

/*
 * The probe runs in a fresh process: this program again, told by
 * SPPROF_DENSE_PROBE=<key>[:<variant>] to check one candidate and exit
 * (probe_main, before main). A fresh process rather than a fork, since a
 * forked child of a process whose OpenMP threads ran cannot start its own.
 */
#define PROBE_VAR "SPPROF_DENSE_PROBE"

extern char **environ;

__attribute__((constructor)) static void probe_main(void)
{
	const char *req = getenv(PROBE_VAR), *colon;
	struct spp_dense_cand c;
	struct spp_error e = {0};
	char key[32], why[256] = "";
	int rc = 0;

	if (!req)
		return;
	colon = strchr(req, ':');
	snprintf(key, sizeof(key), "%.*s", colon ? (int)(colon - req) : (int)strlen(req), req);
	memset(&c, 0, sizeof(c));
	c.lib = spp_dense_lib_find(key);
	if (!c.lib) {
		snprintf(why, sizeof(why), "probe: unknown library '%s'", key);
		rc = 1;
	} else if (c.lib->open(&c, colon ? colon + 1 : NULL, &e) != SPP_OK) {
		snprintf(why, sizeof(why), "%s", e.msg);
		rc = 1;
	} else if (probe_check(&c, why, sizeof(why)) != 0) {
		rc = 1;
	}
	if (why[0] && write(STDOUT_FILENO, why, strlen(why)) < 0)
		rc = 1;
	_exit(rc);
}

/* environ without PROBE_VAR and var, plus "PROBE_VAR=req" and "var=value"; heap. */
static char **probe_env(const char *req, const char *var, const char *value)
{
	size_t n = 0, vl = var ? strlen(var) : 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 3, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (strncmp(environ[i], PROBE_VAR "=", sizeof(PROBE_VAR)) == 0)
			continue;
		if (var && strncmp(environ[i], var, vl) == 0 && environ[i][vl] == '=')
			continue;
		env[k++] = environ[i];
	}
	if (asprintf(&env[k++], "%s=%s", PROBE_VAR, req) < 0) {
		free(env);
		return NULL;
	}
	if (var && asprintf(&env[k++], "%s=%s", var, value) < 0) {
		free(env[k - 2]);
		free(env);
		return NULL;
	}
	env[k] = NULL;
	return env;
}

/*
 * Load and check candidate c in a fresh process: 0 when it loaded and
 * computed right there, else -1 with c->reason. The child has
 * c->lib->tune_env set to variant; nothing it does reaches this process.
 */
int spp_dense_probe(struct spp_dense_cand *c, const char *variant)
{
	int fds[2], status = 0, got = 0, added = variant ? 2 : 1, rc;
	char msg[sizeof(c->reason)] = "", req[96];
	char *argv[] = {"spprof-dense-probe", NULL}, **env;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	size_t nenv = 0;

	snprintf(req, sizeof(req), "%s%s%s", c->lib->key, variant ? ":" : "", variant ? variant : "");
	env = probe_env(req, variant ? c->lib->tune_env : NULL, variant);
	if (!env || pipe(fds) != 0) {
		snprintf(c->reason, sizeof(c->reason), "probe: %s", strerror(errno));
		free(env);
		return -1;
	}
	while (env[nenv])
		nenv++;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	for (int i = 0; i < added; i++)
		free(env[nenv - 1 - (size_t)i]);
	free(env);
	close(fds[1]);
	if (rc != 0) {
		snprintf(c->reason, sizeof(c->reason), "probe: cannot start /proc/self/exe: %s", strerror(rc));
		close(fds[0]);
		return -1;
	}
	for (;;) {
		struct pollfd p = {fds[0], POLLIN, 0};
		ssize_t r;
		int ready = poll(&p, 1, PROBE_TIMEOUT_MS);

		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		r = read(fds[0], msg + got, sizeof(msg) - 1 - (size_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (int)r;
		if ((size_t)got >= sizeof(msg) - 1)
			break;
	}
	msg[got] = '\0';
	close(fds[0]);
	/* one line: what the library printed may span several */
	for (char *p = msg; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	while (got > 0 && msg[got - 1] == ' ')
		msg[--got] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		snprintf(c->reason, sizeof(c->reason), "the probe died of signal %d (%s)%s%.150s",
			 WTERMSIG(status), signal_name(WTERMSIG(status)), msg[0] ? ": " : "", msg);
	else
		snprintf(c->reason, sizeof(c->reason), "%s", msg[0] ? msg : "the probe failed");
	return -1;
}
