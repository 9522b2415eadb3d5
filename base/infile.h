/*
 * Opening an input path for reading. Every file spprof reads goes through
 * here so that a FIFO, a device or a socket is refused at once (open() on a
 * FIFO would block forever) with one line naming the path. The caller owns
 * the descriptor or stream returned. Each file opened is remembered for
 * the rest of the run (spp_infile_opened), so that no output replaces an
 * input.
 */
#ifndef SPP_BASE_INFILE_H
#define SPP_BASE_INFILE_H

#include <stdio.h>
#include <sys/stat.h>

#include "base/error.h"

/*
 * Open path read-only without blocking, refuse anything that is not a
 * regular file, then clear O_NONBLOCK. Returns the descriptor (O_CLOEXEC),
 * or a negative status with SPP_E_IO and "'path': not a regular file (a
 * FIFO)", "'path': is a directory" or "cannot open 'path': why" (SPP_E_NOMEM
 * when it cannot be remembered). st, when
 * not NULL, receives the fstat() of the descriptor.
 */
int spp_infile_open(const char *path, struct stat *st, struct spp_error *err);

/*
 * spp_infile_open's checks on fd, a descriptor opened O_RDONLY |
 * O_NONBLOCK | O_CLOEXEC by other means (spp_open_beneath), path naming it
 * in messages: the descriptor, or a negative status with fd closed.
 */
int spp_infile_adopt(int fd, const char *path, struct stat *st, struct spp_error *err);

/* The same, as a stdio stream opened "rb"; NULL with err filled. */
FILE *spp_infile_fopen(const char *path, struct spp_error *err);

/*
 * The path by which the file st describes (its st_dev and st_ino) was
 * opened through here in this run and which still names it, or NULL when
 * there is none. The string lives until exit.
 */
const char *spp_infile_opened(const struct stat *st);

/* What a file of mode m is, for messages: "a FIFO", "a directory", ... */
const char *spp_file_kind(mode_t m);

#endif
