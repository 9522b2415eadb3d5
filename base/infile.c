#define _POSIX_C_SOURCE 200809L
#include "base/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Every file opened for reading, by (st_dev, st_ino), so that an output
 * path naming one is refused (spp_infile_opened). A process-wide list,
 * against the house rule of no mutable globals: the alternative is a list
 * threaded through every loader, shard and external-data reader. Inputs
 * are opened from one thread; the list lives until exit.
 */
struct opened {
	dev_t dev;
	ino_t ino;
	char *path;
};
static struct opened *opened;
static size_t nopened, opened_room;

static int remember(const char *path, const struct stat *s)
{
	struct opened *grown;

	if (spp_infile_opened(s))
		return 0;
	if (nopened == opened_room) {
		size_t room = opened_room ? 2 * opened_room : 16;

		grown = realloc(opened, room * sizeof(*opened));
		if (!grown)
			return -1;
		opened = grown;
		opened_room = room;
	}
	opened[nopened].path = strdup(path);
	if (!opened[nopened].path)
		return -1;
	opened[nopened].dev = s->st_dev;
	opened[nopened++].ino = s->st_ino;
	return 0;
}

/*
 * An entry matches while its path still names the same file: one read and
 * since deleted may have left its inode number to a new file.
 */
const char *spp_infile_opened(const struct stat *st)
{
	struct stat now;

	for (size_t i = 0; i < nopened; i++)
		if (opened[i].dev == st->st_dev && opened[i].ino == st->st_ino &&
		    stat(opened[i].path, &now) == 0 && now.st_dev == st->st_dev &&
		    now.st_ino == st->st_ino)
			return opened[i].path;
	return NULL;
}

const char *spp_file_kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISDIR(m))
		return "a directory";
	return "not a file";
}

int spp_infile_adopt(int fd, const char *path, struct stat *st, struct spp_error *err)
{
	struct stat s;
	int fl;

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
				     path, spp_file_kind(s.st_mode));
	}
	if (remember(path, &s) != 0) {
		close(fd);
		return spp_error_set(err, SPP_E_NOMEM, "cannot open '%s': out of memory", path);
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

int spp_infile_open(const char *path, struct stat *st, struct spp_error *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return spp_error_set(err, SPP_E_IO, "cannot open '%s': %s", path,
				     strerror(errno));
	return spp_infile_adopt(fd, path, st, err);
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
