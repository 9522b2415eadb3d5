/*
 * The set of dense candidates: which to load, the probe that runs each in
 * a child process before the process trusts it, and the loading itself.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "kernels/dense/dense_impl.h"

/* A probe that has not answered in this long is hung: killed, reported failed. */
#define PROBE_TIMEOUT_MS 60000

const struct spp_dense_lib *const spp_dense_libs[] = {
	&spp_dense_openblas,
	&spp_dense_onednn,
	&spp_dense_blis,
	NULL,
};

const struct spp_dense_lib *spp_dense_lib_find(const char *key)
{
	for (int i = 0; spp_dense_libs[i]; i++)
		if (strcmp(spp_dense_libs[i]->key, key) == 0)
			return spp_dense_libs[i];
	return NULL;
}

const char *spp_dense_lib_names(void)
{
	return "openblas, onednn, blis";
}

void (*spp_dense_sym(void *handle, const char *name))(void)
{
	void *p = dlsym(handle, name);
	void (*f)(void) = NULL;

	/* ISO C has no cast from object to function pointer; POSIX makes them the same size */
	if (p)
		memcpy(&f, &p, sizeof(f));
	return f;
}

int spp_dense_not_built(struct spp_error *err, const char *why)
{
	return spp_error_set(err, SPP_E_UNSUPPORTED, "not built in (%s)", why);
}

void spp_dense_gemm_none(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
			 float *y, int64_t n, int threads)
{
	(void)c, (void)w, (void)x, (void)y, (void)n, (void)threads;
}

int spp_dense_cpu_is_amd(void)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;

	if (__get_cpuid(0, &a, &b, &c, &d))
		return b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u; /* "AuthenticAMD" */
#endif
	return 0;
}

int spp_dense_parse(const char *list, struct spp_dense_want *want, char *storage, size_t n,
		    struct spp_error *err)
{
	char *save = NULL, *tok;

	memset(want, 0, sizeof(*want));
	if ((size_t)snprintf(storage, n, "%s", list) >= n)
		return spp_error_set(err, SPP_E_USAGE, "--dense: list too long");
	for (tok = strtok_r(storage, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		const struct spp_dense_lib *lib;

		if (colon)
			*colon = '\0';
		lib = spp_dense_lib_find(tok);
		if (!lib)
			return spp_error_set(err, SPP_E_USAGE, "--dense: unknown library '%s' (known: %s)",
					     tok, spp_dense_lib_names());
		if (colon && (!lib->tune_env || !colon[1]))
			return spp_error_set(err, SPP_E_USAGE, "--dense: '%s:%s': %s", tok, colon + 1,
					     lib->tune_env ? "empty variant"
							   : "this library has no variant to choose");
		if (colon)
			*colon = ':';
		for (int i = 0; i < want->n; i++)
			if (strcmp(want->names[i], tok) == 0)
				return spp_error_set(err, SPP_E_USAGE, "--dense: '%s' given twice", tok);
		if (want->n == SPP_DENSE_MAX)
			return spp_error_set(err, SPP_E_USAGE, "--dense: more than %d entries", SPP_DENSE_MAX);
		want->names[want->n++] = tok;
	}
	if (want->n == 0)
		return spp_error_set(err, SPP_E_USAGE, "--dense: empty list (known: %s)",
				     spp_dense_lib_names());
	return SPP_OK;
}

/* ---- the probe ---- */

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
static int probe(struct spp_dense_cand *c, const char *variant)
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

/* ---- the set ---- */

static struct spp_dense_cand *add(struct spp_dense_set *s, const struct spp_dense_lib *lib,
				  const char *variant, const char *kname)
{
	struct spp_dense_cand *c;

	if (s->n == SPP_DENSE_MAX)
		return NULL;
	c = &s->c[s->n++];
	memset(c, 0, sizeof(*c));
	c->lib = lib;
	if (variant) {
		snprintf(c->name, sizeof(c->name), "%s:%s", lib->key, kname && *kname ? kname : variant);
		snprintf(c->env, sizeof(c->env), "%s=%s", lib->tune_env, variant);
	} else {
		snprintf(c->name, sizeof(c->name), "%s", lib->key);
	}
	return c;
}

/* Load c in this process after its probe passed. */
static void load(struct spp_dense_cand *c, const char *variant)
{
	struct spp_error e = {0};

	if (c->lib->open(c, variant, &e) != SPP_OK) {
		snprintf(c->reason, sizeof(c->reason), "%s", e.msg);
		return;
	}
	c->ok = 1;
}

static int wanted(const struct spp_dense_want *w, const char *key)
{
	if (!w || w->n == 0)
		return 1;
	for (int i = 0; i < w->n; i++)
		if (strcmp(w->names[i], key) == 0)
			return 1;
	return 0;
}

/* Whether want names a variant of lib ("openblas:Haswell"): then it is the user's to choose. */
static int asked_variant(const struct spp_dense_want *w, const struct spp_dense_lib *lib)
{
	size_t kl = strlen(lib->key);

	for (int i = 0; w && i < w->n; i++)
		if (strncmp(w->names[i], lib->key, kl) == 0 && w->names[i][kl] == ':')
			return 1;
	return 0;
}

/* A variant to load, with the kernel sets to fall back on, best first. */
#define VARIANT_ALTS 2

struct variant {
	struct spp_dense_cand *c;
	char value[48];
	int nalt;
	char alt[VARIANT_ALTS][48], alt_name[VARIANT_ALTS][48];
	char *had;              /* the variable's value before it was set for this copy; NULL: unset */
};

/* c takes kernel set a of v: its name, variable and value. */
static void take_alt(struct variant *v, int a)
{
	struct spp_dense_cand *c = v->c;

	snprintf(c->name, sizeof(c->name), "%s:%s", c->lib->key, v->alt_name[a]);
	snprintf(c->env, sizeof(c->env), "%s=%s", c->lib->tune_env, v->alt[a]);
	snprintf(v->value, sizeof(v->value), "%s", v->alt[a]);
}

/*
 * Probe v's kernel sets in order until one passes; the candidate takes the
 * name and variable of the one that did. 0, or -1 when none passed (the
 * first's reason kept).
 */
static int probe_variant(struct variant *v)
{
	char first[sizeof(v->c->reason)] = "", why[sizeof(v->c->origin)];

	snprintf(why, sizeof(why), "%s", v->c->origin);
	for (int a = 0; a < v->nalt; a++) {
		struct spp_dense_cand *c = v->c;

		take_alt(v, a);
		if (probe(c, v->alt[a]) == 0) {
			/* why: "" for a variant the user asked for */
			if (why[0])
				snprintf(c->origin, sizeof(c->origin), "spprof's choice: %s=%s, since %.110s%s%s%s",
					 c->lib->tune_env, v->alt[a], why, a ? " (" : "",
					 a ? v->alt_name[0] : "", a ? " is not in this build)" : "");
			return 0;
		}
		if (a == 0)
			snprintf(first, sizeof(first), "%s", c->reason);
	}
	snprintf(v->c->reason, sizeof(v->c->reason), "%s", first);
	if (why[0])
		snprintf(v->c->origin, sizeof(v->c->origin), "spprof's choice: %s=%s, since %.110s",
			 v->c->lib->tune_env, v->alt[0], why);
	take_alt(v, 0);
	return -1;
}

/*
 * Each usable candidate whose library can run as GEMVs gets its companion
 * "<name>/gemv" (by_columns), while there is room: the same loaded copy,
 * probed with it (the probe checks the library's GEMV), and checked
 * against the reference at every shape it is timed on like any other.
 */
static void add_companions(struct spp_dense_set *s)
{
	int n0 = s->n;

	for (int i = 0; i < n0 && s->n < SPP_DENSE_MAX; i++) {
		struct spp_dense_cand *c;

		if (!s->c[i].ok || !s->c[i].lib->gemv_cols)
			continue;
		c = &s->c[s->n++];
		*c = s->c[i];
		c->by_columns = 1;
		snprintf(c->name, sizeof(c->name), "%.40s/gemv", s->c[i].name);
		snprintf(c->origin, sizeof(c->origin), "%.150s; run as one GEMV per column of X",
			 s->c[i].origin);
	}
}

int spp_dense_set_open(struct spp_dense_set *s, const struct spp_dense_want *want,
		       enum spp_isa isa, struct spp_error *err)
{
	struct variant vars[SPP_DENSE_MAX];
	int nvars = 0, usable = 0;
	size_t len = 0;
	char all[512] = "";

	memset(s, 0, sizeof(*s));
	/* each library as the process has it, checked in a child first */
	for (int i = 0; spp_dense_libs[i]; i++) {
		const struct spp_dense_lib *lib = spp_dense_libs[i];
		const char *user = lib->tune_env ? getenv(lib->tune_env) : NULL;
		struct spp_dense_cand *c;
		struct variant *var = &vars[nvars];

		if (!wanted(want, lib->key))
			continue;
		c = add(s, lib, NULL, NULL);
		if (!c)
			break;
		if (!lib->tune_env)
			snprintf(c->origin, sizeof(c->origin), "as loaded (kernels from the CPU's flags)");
		else if (user)
			snprintf(c->origin, sizeof(c->origin), "as loaded, with the user's %s=%s",
				 lib->tune_env, user);
		else
			snprintf(c->origin, sizeof(c->origin), "as loaded (its own CPU detection; %s unset)",
				 lib->tune_env);
		if (probe(c, NULL) == 0)
			load(c, NULL);
		/*
		 * A lesser kernel set than the CPU's ISA, by the library's own
		 * detection or the user's variable: spprof's choice beside it,
		 * each timed, the fastest verified one the baseline (unless the
		 * user's --dense names the variants of this library).
		 */
		if (!c->ok || !lib->better || asked_variant(want, lib) || nvars == SPP_DENSE_MAX)
			continue;
		memset(var, 0, sizeof(*var));
		while (var->nalt < VARIANT_ALTS &&
		       lib->better(c, isa, var->nalt, var->alt[var->nalt], sizeof(var->alt[0]),
				   var->alt_name[var->nalt], sizeof(var->alt_name[0])))
			var->nalt++;
		if (var->nalt && (var->c = add(s, lib, var->alt[0], var->alt_name[0]))) {
			/* probe_variant words the rest when it knows which loaded */
			snprintf(var->c->origin, sizeof(var->c->origin), "%s %s %s, below this CPU's %s",
				 lib->name, user ? "was told" : "detected", c->kernel, spp_isa_name(isa));
			nvars++;
		}
	}
	/* variants the user named: "openblas:Haswell" */
	for (int i = 0; want && i < want->n; i++) {
		const char *colon = strchr(want->names[i], ':');
		char key[32];
		struct spp_dense_cand *v;

		if (!colon || nvars == SPP_DENSE_MAX)
			continue;
		snprintf(key, sizeof(key), "%.*s", (int)(colon - want->names[i]), want->names[i]);
		v = add(s, spp_dense_lib_find(key), colon + 1, colon + 1);
		if (!v)
			break;
		memset(&vars[nvars], 0, sizeof(vars[nvars]));
		vars[nvars].c = v;
		vars[nvars].nalt = 1;
		snprintf(vars[nvars].alt[0], sizeof(vars[0].alt[0]), "%s", colon + 1);
		snprintf(vars[nvars++].alt_name[0], sizeof(vars[0].alt_name[0]), "%s", colon + 1);
	}
	for (int i = 0; i < nvars; i++) {
		struct spp_dense_cand *c = vars[i].c;
		int asked = !c->origin[0], rc = probe_variant(&vars[i]);

		if (asked)
			snprintf(c->origin, sizeof(c->origin), "asked for: --dense %s:%s", c->lib->key,
				 vars[i].value);
		if (rc != 0)
			vars[i].c = NULL;
	}
	/*
	 * Load the variants that passed with their variable set. The new
	 * namespaces keep a pointer to the environment array, so every name
	 * is set before the first load (setting a new name may move the
	 * array) and only replaced or removed after it; the user's values
	 * are copied first and set again at the end.
	 */
	for (int i = 0; i < nvars; i++) {
		const char *had = vars[i].c ? getenv(vars[i].c->lib->tune_env) : NULL;

		if (had && !(vars[i].had = strdup(had))) {
			snprintf(vars[i].c->reason, sizeof(vars[i].c->reason), "out of memory");
			vars[i].c = NULL;
		}
	}
	for (int i = 0; i < nvars; i++)
		if (vars[i].c && !getenv(vars[i].c->lib->tune_env))
			setenv(vars[i].c->lib->tune_env, vars[i].value, 1);
	for (int i = 0; i < nvars; i++)
		if (vars[i].c) {
			setenv(vars[i].c->lib->tune_env, vars[i].value, 1);
			load(vars[i].c, vars[i].value);
		}
	for (int i = 0; i < nvars; i++) {
		if (vars[i].c && vars[i].had)
			setenv(vars[i].c->lib->tune_env, vars[i].had, 1);
		else if (vars[i].c)
			unsetenv(vars[i].c->lib->tune_env);
		free(vars[i].had);
	}
	add_companions(s);
	for (int i = 0; i < s->n; i++) {
		usable += s->c[i].ok;
		if (!s->c[i].ok && len < sizeof(all))
			len += (size_t)snprintf(all + len, sizeof(all) - len, "%s%s: %s", len ? "; " : "",
						s->c[i].name, s->c[i].reason);
	}
	if (!usable)
		return spp_error_set(err, SPP_E_RUNTIME, "no dense baseline can run here: %s",
				     s->n ? all : "none asked for");
	return SPP_OK;
}

void spp_dense_set_close(struct spp_dense_set *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++)
		if (s->c[i].ok && !s->c[i].by_columns && s->c[i].lib->close)
			s->c[i].lib->close(&s->c[i]);
	memset(s, 0, sizeof(*s));
}

int spp_dense_set_first(const struct spp_dense_set *s)
{
	for (int i = 0; s && i < s->n; i++)
		if (s->c[i].ok)
			return i;
	return -1;
}

void spp_dense_run(const struct spp_dense_cand *c, const struct spp_matrix *w, const float *x,
		   float *y, int64_t n, int threads)
{
	if (w->m <= 0 || n <= 0)
		return;
	if (w->k <= 0) {
		memset(y, 0, (size_t)(w->m * n) * sizeof(*y));
		return;
	}
	if (c->by_columns && n > 1)
		c->lib->gemv_cols(c, w, x, y, n, threads);
	else
		c->lib->gemm(c, w, x, y, n, threads);
}

void spp_dense_describe(const struct spp_dense_cand *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s %s (%s)", c->lib->name, c->version[0] ? c->version : "?",
		 c->kernel[0] ? c->kernel : "?");
}
