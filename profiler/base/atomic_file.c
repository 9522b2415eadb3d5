#include "profiler/base/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(struct spp_error *err, const char *path, int e)
{
	return spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", path,
			     strerror(e ? e : EIO));
}

int spp_atomic_open(struct spp_atomic_file *af, const char *path,
		    struct spp_error *err)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
	size_t cap = strlen(path) + sizeof("/..XXXXXX");
	int fd, e;

	memset(af, 0, sizeof(*af));
	af->path = path;
	af->tmp = malloc(cap);
	if (!af->tmp)
		return spp_error_set(err, SPP_E_NOMEM, "cannot write '%s': out of memory", path);
	/* hidden and in the same folder, so the rename cannot cross file systems */
	snprintf(af->tmp, cap, "%.*s.%s.XXXXXX", (int)dir_len, path, path + dir_len);
	fd = mkstemp(af->tmp);
	if (fd < 0) {
		e = errno;
		free(af->tmp);
		af->tmp = NULL;
		return fail(err, path, e);
	}
	/* mkstemp makes 0600; what spprof writes is meant to be read by others */
	if (fchmod(fd, 0644) != 0 || !(af->f = fdopen(fd, "wb"))) {
		e = errno;
		close(fd);
		spp_atomic_abort(af);
		return fail(err, path, e);
	}
	setvbuf(af->f, NULL, _IOFBF, 1 << 20);
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
}
