#include "base/atomic_file.h"
#include "base/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The temporary files that exist now, for the signal handler: a
 * handler reaches only static storage, so these are the file's mutable
 * globals. An entry is switched on after its paths are copied and off
 * after the file is renamed or removed, so the handler may find a name
 * already gone (harmless) but never misses a file. Between mkstemp()
 * creating the file and its entry being switched on, `creating` is set: a
 * signal then is held in `held` and raised again once the entry is on.
 */
#define SLOTS 4
static char slot_tmp[SLOTS][PATH_MAX];
static char slot_path[SLOTS][PATH_MAX];
static volatile sig_atomic_t slot_on[SLOTS];
static volatile sig_atomic_t creating, held;

static void put(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	while (n > 0) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/*
 * The signals that end a run whose temporary file would otherwise stay:
 * Ctrl-C, kill, a closed terminal, Ctrl-\\, a closed pipe and a file past
 * RLIMIT_FSIZE; each with what the handler says.
 */
static const struct {
	int sig;
	const char *says;
} handled[] = {
	{SIGINT, "spprof: interrupted (SIGINT): '"},
	{SIGTERM, "spprof: terminated (SIGTERM): '"},
	{SIGHUP, "spprof: hung up (SIGHUP): '"},
	{SIGQUIT, "spprof: quit (SIGQUIT): '"},
	{SIGPIPE, "spprof: broken pipe (SIGPIPE): '"},
	{SIGXFSZ, "spprof: file size limit exceeded (SIGXFSZ): '"},
};
#define NHANDLED (sizeof(handled) / sizeof(handled[0]))

/* Async-signal-safe: unlink, write and _exit only. */
static void on_signal(int sig)
{
	struct sigaction dfl;
	const char *says = "spprof: signalled: '";
	int removed = 0;

	/* held first, then creating read: make_tmp reads held after clearing creating */
	held = sig;
	atomic_signal_fence(memory_order_seq_cst);
	if (creating)
		return;
	for (size_t i = 0; i < NHANDLED; i++)
		if (handled[i].sig == sig)
			says = handled[i].says;
	for (int i = 0; i < SLOTS; i++) {
		if (!slot_on[i])
			continue;
		unlink(slot_tmp[i]);
		put(says);
		put(slot_path[i]);
		put("' not written\n");
		removed = 1;
	}
	if (removed)
		_exit(128 + sig);
	/* nothing to clean: die of the signal as if no handler were there */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

/* Once: handle each of handled[], unless the process ignores it or has its own handler. */
static void install_handler(void)
{
	static int installed;
	struct sigaction sa, old;

	if (installed)
		return;
	installed = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NHANDLED; i++)
		sigaddset(&sa.sa_mask, handled[i].sig);
	for (size_t i = 0; i < NHANDLED; i++)
		if (sigaction(handled[i].sig, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
			sigaction(handled[i].sig, &sa, NULL);
}

/* 1 + the entry now holding tmp and path; 0 when none is free or they do not fit. */
static int track(const char *tmp, const char *path)
{
	size_t nt = strlen(tmp) + 1, np = strlen(path) + 1;

	if (nt > sizeof(slot_tmp[0]) || np > sizeof(slot_path[0]))
		return 0;
	for (int i = 0; i < SLOTS; i++) {
		if (slot_on[i])
			continue;
		memcpy(slot_tmp[i], tmp, nt);
		memcpy(slot_path[i], path, np);
		atomic_signal_fence(memory_order_seq_cst);
		slot_on[i] = 1;
		return i + 1;
	}
	return 0;
}

static void untrack(struct spp_atomic_file *af)
{
	if (af->slot)
		slot_on[af->slot - 1] = 0;
	af->slot = 0;
}

static int fail(struct spp_error *err, const char *path, int e)
{
	return spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", path,
			     strerror(e ? e : EIO));
}

/* An existing target must be a regular file and, unless rewrite, not an input. */
static int check_target(const char *path, int rewrite, struct spp_error *err)
{
	struct stat st;
	const char *in;

	if (!path[0])
		return spp_error_set(err, SPP_E_USAGE, "cannot write '': an empty path");
	/* absent; or a fault of its folder, which creating the temp file reports */
	if (stat(path, &st) != 0)
		return SPP_OK;
	if (S_ISDIR(st.st_mode))
		return spp_error_set(err, SPP_E_USAGE, "cannot write '%s': is a directory", path);
	if (!S_ISREG(st.st_mode))
		return spp_error_set(err, SPP_E_USAGE, "cannot write '%s': not a regular file (%s)",
				     path, spp_file_kind(st.st_mode));
	if (!rewrite && (in = spp_infile_opened(&st)))
		return spp_error_set(err, SPP_E_USAGE, "cannot write '%s': is the input '%s'",
				     path, in);
	return SPP_OK;
}

/* The temporary file of af->path: 0, or the errno (af->tmp NULL, nothing left). */
static int make_tmp(struct spp_atomic_file *af)
{
	const char *path = af->path, *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
	size_t cap = strlen(path) + sizeof("/..XXXXXX");
	int fd, e;

	af->tmp = malloc(cap);
	if (!af->tmp)
		return ENOMEM;
	/* hidden and in the same folder, so the rename cannot cross file systems */
	snprintf(af->tmp, cap, "%.*s.%s.XXXXXX", (int)dir_len, path, path + dir_len);
	install_handler();
	held = 0;
	creating = 1;
	atomic_signal_fence(memory_order_seq_cst);
	fd = mkstemp(af->tmp);
	e = errno;
	if (fd >= 0)
		af->slot = track(af->tmp, path);
	creating = 0;
	atomic_signal_fence(memory_order_seq_cst);
	/* a signal while the file had no entry: now that it has one, as if it came now */
	if (held)
		raise(held);
	if (fd < 0) {
		free(af->tmp);
		af->tmp = NULL;
		return e;
	}
	/* mkstemp makes 0600; what spprof writes is meant to be read by others */
	if (fchmod(fd, 0644) != 0 || !(af->f = fdopen(fd, "wb"))) {
		e = errno;
		close(fd);
		spp_atomic_abort(af);
		return e ? e : EIO;
	}
	setvbuf(af->f, NULL, _IOFBF, 1 << 20);
	return 0;
}

static int open_target(struct spp_atomic_file *af, const char *path, int rewrite,
		       struct spp_error *err)
{
	int rc, e;

	memset(af, 0, sizeof(*af));
	af->path = path;
	if ((rc = check_target(path, rewrite, err)))
		return rc;
	e = make_tmp(af);
	if (e == ENOMEM)
		return spp_error_set(err, SPP_E_NOMEM, "cannot write '%s': out of memory", path);
	return e ? fail(err, path, e) : SPP_OK;
}

int spp_atomic_open(struct spp_atomic_file *af, const char *path,
		    struct spp_error *err)
{
	return open_target(af, path, 0, err);
}

int spp_atomic_open_rewrite(struct spp_atomic_file *af, const char *path,
			    struct spp_error *err)
{
	return open_target(af, path, 1, err);
}

int spp_outfile_check(const char *path, struct spp_error *err)
{
	const char *slash = strrchr(path, '/');
	struct spp_atomic_file af;
	int rc, e;

	memset(&af, 0, sizeof(af));
	af.path = path;
	if ((rc = check_target(path, 0, err)))
		return rc;
	e = make_tmp(&af);
	spp_atomic_abort(&af);
	if (e == ENOMEM)
		return spp_error_set(err, SPP_E_NOMEM, "cannot write '%s': out of memory", path);
	if (e)
		return spp_error_set(err, SPP_E_USAGE, "cannot write '%s': folder '%.*s': %s", path,
				     !slash ? 1 : slash == path ? 1 : (int)(slash - path),
				     slash ? path : ".", strerror(e));
	return SPP_OK;
}

/* Make the rename itself durable; best effort, nothing written is lost. */
static void sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
	int fd;

	if (!dir)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

int spp_atomic_commit(struct spp_atomic_file *af, struct spp_error *err)
{
	int e = 0, rc;

	errno = 0;
	if (ferror(af->f) || fflush(af->f) != 0 || fsync(fileno(af->f)) != 0)
		e = errno ? errno : EIO;
	rc = fclose(af->f);
	af->f = NULL;
	if (!e && rc != 0)
		e = errno ? errno : EIO;
	if (!e && rename(af->tmp, af->path) != 0)
		e = errno;
	if (e) {
		spp_atomic_abort(af);
		return fail(err, af->path, e);
	}
	untrack(af);
	sync_dir(af->path);
	free(af->tmp);
	af->tmp = NULL;
	return SPP_OK;
}

void spp_atomic_abort(struct spp_atomic_file *af)
{
	if (af->f)
		fclose(af->f);
	af->f = NULL;
	if (af->tmp) {
		unlink(af->tmp);
		free(af->tmp);
	}
	af->tmp = NULL;
	untrack(af);
}
