#define _POSIX_C_SOURCE 200809L
#include "profiler/base/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a file";
}

int spp_infile_open(const char *path, struct stat *st, struct spp_error *err)
{
	struct stat s;
	int fd, fl;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return spp_error_set(err, SPP_E_IO, "cannot open '%s': %s", path,
				     strerror(errno));
	if (fstat(fd, &s) != 0) {
		int e = errno;
		close(fd);
		return spp_error_set(err, SPP_E_IO, "cannot stat '%s': %s", path,
				     strerror(e));
	}
	if (S_ISDIR(s.st_mode)) {
		close(fd);
		return spp_error_set(err, SPP_E_IO, "'%s': is a directory", path);
	}
	if (!S_ISREG(s.st_mode)) {
		close(fd);
		return spp_error_set(err, SPP_E_IO, "'%s': not a regular file (%s)",
				     path, kind_of(s.st_mode));
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		int e = errno;
		close(fd);
		return spp_error_set(err, SPP_E_IO, "cannot open '%s': %s", path,
				     strerror(e));
	}
	if (st)
		*st = s;
	return fd;
}

FILE *spp_infile_fopen(const char *path, struct spp_error *err)
{
	FILE *f;
	int fd = spp_infile_open(path, NULL, err);

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "rb");
	if (!f) {
		int e = errno;
		close(fd);
		spp_error_set(err, SPP_E_IO, "cannot open '%s': %s", path, strerror(e));
	}
	return f;
}
