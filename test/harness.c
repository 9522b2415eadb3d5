#include "test/harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

char *harness_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4097 > cap) {
			char *grown;
			cap = cap ? cap * 2 : 8192;
			grown = realloc(buf, cap);
			if (!grown) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = grown;
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (got < 4096)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int harness_write(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	int rc = 0;

	if (!f)
		return -1;
	if (len && fwrite(data, 1, len, f) != len)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/*
 * Run prog with args, stdin from /dev/null, stdout into a file; stderr into
 * a file too, or onto tty (the slave of a pseudo-terminal whose master the
 * caller reads: r->err then holds what the terminal got).
 */
static int spawn(struct harness_run *r, const char *prog, const char *const *args, int tty,
		 int master)
{
	char out_path[] = "/tmp/spp-test-out.XXXXXX";
	char err_path[] = "/tmp/spp-test-err.XXXXXX";
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	const char *argv[64];
	int out_fd, err_fd = -1, wstatus, argc = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	argv[argc++] = prog;
	for (int i = 0; args[i] && argc < 63; i++)
		argv[argc++] = args[i];
	argv[argc] = NULL;
	out_fd = mkstemp(out_path);
	if (tty < 0)
		err_fd = mkstemp(err_path);
	if (out_fd < 0 || (tty < 0 && err_fd < 0))
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	posix_spawn_file_actions_adddup2(&fa, tty >= 0 ? tty : err_fd, 2);
	if (master >= 0)
		posix_spawn_file_actions_addclose(&fa, master);
	if (posix_spawn(&pid, prog, &fa, NULL, (char *const *)argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(out_fd);
	if (tty >= 0) {
		/* read the terminal until the child's end of it closes (EIO) */
		size_t cap = 4096, n = 0;
		char *buf = malloc(cap);
		ssize_t got;

		close(tty);
		while (buf && (got = read(master, buf + n, cap - n - 1)) > 0) {
			n += (size_t)got;
			if (cap - n < 1024) {
				char *grown = realloc(buf, cap * 2);
				if (!grown) {
					free(buf);
					buf = NULL;
					break;
				}
				buf = grown;
				cap *= 2;
			}
		}
		if (buf)
			buf[n] = '\0';
		r->err = buf;
		r->err_len = n;
	} else {
		close(err_fd);
	}
	if (wait4(pid, &wstatus, 0, &ru) < 0)
		return -1;
	r->maxrss_kb = ru.ru_maxrss;
	r->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	r->out = harness_slurp(out_path, &r->out_len);
	unlink(out_path);
	if (tty < 0) {
		r->err = harness_slurp(err_path, &r->err_len);
		unlink(err_path);
	}
	return r->out && r->err ? 0 : -1;
}

int harness_exec(struct harness_run *r, const char *prog, const char *const *args)
{
	return spawn(r, prog, args, -1, -1);
}

int harness_open_pty(int *master, int *slave, char *why, size_t n)
{
	const char *name;

	*master = *slave = -1;
	*master = posix_openpt(O_RDWR | O_NOCTTY);
	if (*master < 0) {
		snprintf(why, n, "posix_openpt: %s", strerror(errno));
		return -1;
	}
	if (grantpt(*master) != 0 || unlockpt(*master) != 0 || !(name = ptsname(*master))) {
		snprintf(why, n, "grantpt/unlockpt/ptsname: %s", strerror(errno));
		goto fail;
	}
	*slave = open(name, O_RDWR | O_NOCTTY);
	if (*slave < 0) {
		snprintf(why, n, "cannot open '%s': %s", name, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	close(*master);
	*master = -1;
	return -1;
}

int harness_spprof_tty(struct harness_run *r, const char *const *args, char *why, size_t n)
{
	const char *prog = getenv("SPPROF");
	int master, slave, rc;

	memset(r, 0, sizeof(*r));
	if (!prog) {
		snprintf(why, n, "SPPROF is not set (run through meson test)");
		return -1;
	}
	if (harness_open_pty(&master, &slave, why, n) != 0)
		return -1;
	rc = spawn(r, prog, args, slave, master);
	close(master);
	if (rc != 0)
		snprintf(why, n, "cannot run '%s' on a pseudo-terminal", prog);
	return rc;
}

int harness_spprof(struct harness_run *r, const char *const *args)
{
	const char *prog = getenv("SPPROF");
	if (!prog) {
		fprintf(stderr, "harness: SPPROF is not set (run through meson test)\n");
		return -1;
	}
	return harness_exec(r, prog, args);
}

int harness_spprof_limited(struct harness_run *r, const char *const *args, int cpu_s)
{
	const char *prog = getenv("SPPROF"), *argv[64];
	char script[64];
	int argc = 0;

	if (!prog) {
		fprintf(stderr, "harness: SPPROF is not set (run through meson test)\n");
		return -1;
	}
	/* the shell sets the limit and becomes spprof: wait4 sees spprof's own usage */
	snprintf(script, sizeof(script), "ulimit -t %d && exec \"$0\" \"$@\"", cpu_s);
	argv[argc++] = "-c";
	argv[argc++] = script;
	argv[argc++] = prog;
	for (int i = 0; args[i] && argc < 63; i++)
		argv[argc++] = args[i];
	argv[argc] = NULL;
	return harness_exec(r, "/bin/sh", argv);
}

void harness_run_free(struct harness_run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

int harness_count_lines(const char *s)
{
	int n = 0;
	const char *p = s;

	for (; *p; p++)
		if (*p == '\n')
			n++;
	if (p > s && p[-1] != '\n')
		n++;
	return n;
}

char *harness_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *dir;

	if (!base || !*base)
		base = "/tmp";
	dir = harness_join(base, "spp-test.XXXXXX");
	if (dir && !mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void harness_rmtree(char *dir)
{
	if (dir)
		nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

char *harness_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", dir, name);
	return p;
}

int harness_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

int harness_count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

int harness_write_npy_f32(const char *path, long rows, long cols, const float *v)
{
	char dict[128];
	size_t n = (size_t)rows * (size_t)cols * sizeof(float), len, hlen;
	unsigned char *buf;
	int rc;

	/* magic, version 1.0, header length (LE), then the dict padded with
	 * spaces and a newline so that the data starts at a multiple of 64 */
	len = (size_t)snprintf(dict, sizeof(dict), "{'descr': '<f4', 'fortran_order': False, 'shape': (%ld, %ld), }",
			       rows, cols);
	hlen = (10 + len + 1 + 63) / 64 * 64 - 10;
	buf = malloc(10 + hlen + n);
	if (!buf || len >= sizeof(dict))
		return free(buf), -1;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (unsigned char)(hlen & 0xff);
	buf[9] = (unsigned char)(hlen >> 8);
	memcpy(buf + 10, dict, len);
	memset(buf + 10 + len, ' ', hlen - len - 1);
	buf[10 + hlen - 1] = '\n';
	memcpy(buf + 10 + hlen, v, n);
	rc = harness_write(path, buf, 10 + hlen + n);
	free(buf);
	return rc;
}

char *harness_dlmc_dir(void)
{
	const char *sm = getenv("SPP_SAMPLE_MODELS");
	char *d;

	if (!sm)
		return NULL;
	d = malloc(strlen(sm) + 64);
	if (d)
		sprintf(d, "%s/../../shared/bench/dlmc", sm);
	return d;
}

uint64_t harness_rand_u64(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dull;
}

double harness_rand_uniform(uint64_t *state)
{
	return (double)(harness_rand_u64(state) >> 11) / 9007199254740992.0;
}

float harness_rand_nz(uint64_t *state)
{
	float v = (float)(0.0625 + 0.9375 * harness_rand_uniform(state));

	return harness_rand_u64(state) & 1 ? v : -v;
}
