#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "base/beneath.h"
#include "base/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC)

static int outside(const char *from, const char *name, struct spp_error *err)
{
	return spp_error_format(err, from, "'%s' leads outside the model's folder", name);
}

int spp_name_beneath(const char *name)
{
	const char *p = name;

	if (!*name || *name == '/' || *name == '\\')
		return -1;
	while (*p) {
		size_t n = strcspn(p, "/\\");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return -1;
		p += n;
		if (*p)
			p++;
	}
	return 0;
}

/* dir/name, the folder's "/" added where it has none; NULL when out of memory. */
static char *joined(const char *dir, const char *name)
{
	size_t dl = dir ? strlen(dir) : 0;
	char *p;

	if (asprintf(&p, "%s%s%s", dl ? dir : "", dl && dir[dl - 1] != '/' ? "/" : "", name) < 0)
		return NULL;
	return p;
}

/* Without openat2: the resolved path must lie under the resolved folder. */
static int open_checked(const char *dir, const char *full, const char *name, const char *from,
			struct spp_error *err)
{
	char *rd = realpath(dir && *dir ? dir : ".", NULL), *rf;
	size_t n;
	int fd;

	if (!rd)
		return spp_error_set(err, SPP_E_IO, "cannot open '%s': %s", dir, strerror(errno));
	if (!(rf = realpath(full, NULL))) {
		int e = errno;

		free(rd);
		return spp_error_set(err, SPP_E_IO, "cannot open '%s': %s", full, strerror(e));
	}
	n = strlen(rd);
	if (strncmp(rf, rd, n) != 0 || (rf[n] != '/' && strcmp(rd, "/") != 0)) {
		free(rd), free(rf);
		return outside(from, name, err);
	}
	fd = open(rf, OPEN_FLAGS);
	free(rd), free(rf);
	if (fd < 0)
		return spp_error_set(err, SPP_E_IO, "cannot open '%s': %s", full, strerror(errno));
	return fd;
}

static int open_name(const char *dir, const char *full, const char *name, const char *from,
		     struct spp_error *err)
{
	struct open_how how = {.flags = OPEN_FLAGS,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
	int dfd = open(dir && *dir ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC), fd, e;

	if (dfd < 0)
		return spp_error_set(err, SPP_E_IO, "cannot open '%s': %s", dir, strerror(errno));
	fd = (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
	e = errno;
	close(dfd);
	if (fd >= 0)
		return fd;
	if (e == ENOSYS || e == EPERM) /* an old kernel, or a filter that hides the call */
		return open_checked(dir, full, name, from, err);
	if (e == EXDEV || e == ELOOP)
		return outside(from, name, err);
	return spp_error_set(err, SPP_E_IO, "cannot open '%s': %s", full, strerror(e));
}

int spp_open_beneath(const char *dir, const char *name, const char *from, struct stat *st,
		     struct spp_error *err)
{
	char *full;
	int fd;

	if (spp_name_beneath(name))
		return outside(from, name, err);
	if (!(full = joined(dir, name)))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", from);
	fd = open_name(dir, full, name, from, err);
	if (fd >= 0)
		fd = spp_infile_adopt(fd, full, st, err);
	free(full);
	return fd;
}

int spp_mapfile_beneath(const char *dir, const char *name, const char *from,
			struct spp_mapped_file *out, struct stat *st, struct spp_error *err)
{
	struct stat s;
	char *full;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	if ((fd = spp_open_beneath(dir, name, from, &s, err)) < 0)
		return fd;
	if (!(full = joined(dir, name))) {
		close(fd);
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", from);
	}
	rc = spp_mapfile_fd(fd, (uint64_t)s.st_size, full, out, err);
	free(full);
	if (!rc && st)
		*st = s;
	return rc;
}
