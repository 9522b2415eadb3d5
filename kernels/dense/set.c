/*
 * The set of dense candidates: which to load, and the loading itself
 * once the probe (probe.c) has run each in a child process.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "kernels/dense/dense_impl.h"

const struct spp_dense_lib *const spp_dense_libs[] = {
	&spp_dense_openblas,
	&spp_dense_onednn,
	&spp_dense_blis,
	&spp_dense_own,
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
	return "openblas, onednn, blis, spprof";
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
		if (spp_dense_probe(c, v->alt[a]) == 0) {
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

/*
 * Each wanted library as the process has it (probed in a child first), and
 * for one whose kernels are below the CPU's ISA a variant of spprof's
 * choice beside it in vars[]; the number of vars.
 */
static int open_as_loaded(struct spp_dense_set *s, const struct spp_dense_want *want,
			  enum spp_isa isa, struct variant *vars)
{
	int nvars = 0;

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
		if (spp_dense_probe(c, NULL) == 0)
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
	return nvars;
}

/* The variants the user named ("openblas:Haswell") added to vars[nvars...]; the new count. */
static int add_asked(struct spp_dense_set *s, const struct spp_dense_want *want,
		     struct variant *vars, int nvars)
{
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
	return nvars;
}

/*
 * Probe the variants, then load those that passed with their variable
 * set. The new namespaces keep a pointer to the environment array, so
 * every name is set before the first load (setting a new name may move
 * the array) and only replaced or removed after it; the user's values are
 * copied first and set again at the end.
 */
static void load_variants(struct variant *vars, int nvars)
{
	for (int i = 0; i < nvars; i++) {
		struct spp_dense_cand *c = vars[i].c;
		int asked = !c->origin[0], rc = probe_variant(&vars[i]);

		if (asked)
			snprintf(c->origin, sizeof(c->origin), "asked for: --dense %s:%s", c->lib->key,
				 vars[i].value);
		if (rc != 0)
			vars[i].c = NULL;
	}
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
}

int spp_dense_set_open(struct spp_dense_set *s, const struct spp_dense_want *want,
		       enum spp_isa isa, struct spp_error *err)
{
	struct variant vars[SPP_DENSE_MAX];
	int nvars, usable = 0;
	size_t len = 0;
	char all[512] = "";

	memset(s, 0, sizeof(*s));
	nvars = open_as_loaded(s, want, isa, vars);
	nvars = add_asked(s, want, vars, nvars);
	load_variants(vars, nvars);
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
