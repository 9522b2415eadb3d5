/* MPI mode of analyze (cmd_mpi.h). */
#include "cmd/cmd_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "config.h"
#include "base/error.h"
#include "profiler/analyze.h"
#include "reports/json_values.h"
#include "reports/report.h"

#if HAVE_MPI
#include <mpi.h>

int cmd_mpi_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMI_SIZE") != NULL ||
	       getenv("PMIX_RANK") != NULL;
}

/* This rank's part: its report as JSON text, or its error (*failed). Owned by the caller. */
static char *rank_part(const char *path, struct spp_analyze_opts *o, int *failed)
{
	struct spp_analysis *a = NULL;
	struct spp_error e = {0};
	cJSON *report = NULL;
	char *text = NULL;

	*failed = 1;
	if (spp_analyze_run(path, o, &a, &e) == 0 && (report = spp_report_build(a, SPP_VERSION, &e)))
		text = spp_json_text_exact(report, 0), *failed = text == NULL;
	cJSON_Delete(report);
	spp_analysis_destroy(a);
	if (*failed && !text)
		text = strdup(e.msg[0] ? e.msg : "out of memory");
	return text;
}

/* Rank 0: the parts of the ranks that succeeded written to dir, the others' errors in failed[]. */
static int merge_parts(const char *path, char *buf, const int *meta, int size, cJSON **report,
		       struct spp_error *err)
{
	char dir[] = "/tmp/spprof-mpi-XXXXXX", (*paths)[64] = calloc((size_t)size, sizeof(*paths));
	char (*names)[32] = calloc((size_t)size, sizeof(*names));
	const char **named = calloc((size_t)size, sizeof(*named));
	struct spp_analysis *merged = NULL;
	struct spp_merge_machines mm = {0};
	const char **ok = calloc((size_t)size, sizeof(*ok)), **failed = calloc((size_t)size, sizeof(*failed));
	int nok = 0, rc = 0;
	size_t off = 0;

	if (!paths || !ok || !failed || !names || !named || !mkdtemp(dir))
		rc = spp_error_set(err, SPP_E_OUTPUT, "MPI: cannot make a folder for the ranks' reports");
	for (int r = 0; r < size && !rc; off += (size_t)meta[2 * r], r++) {
		FILE *f;

		if (meta[2 * r + 1]) {
			failed[r] = buf + off;
			continue;
		}
		snprintf(paths[r], sizeof(paths[r]), "%s/rank%d.json", dir, r);
		snprintf(names[nok], sizeof(names[nok]), "MPI rank %d of %d", r, size);
		named[nok] = names[nok];
		if (!(f = fopen(paths[r], "w")) || fputs(buf + off, f) < 0 || fclose(f))
			rc = spp_error_set(err, SPP_E_OUTPUT, "MPI: cannot write '%s'", paths[r]);
		ok[nok++] = paths[r];
	}
	if (!rc && nok == 0)
		rc = spp_error_set(err, SPP_E_FORMAT, "every rank failed; rank 0: %s", failed[0]);
	if (!rc)
		rc = spp_report_merge(ok, nok, &(struct spp_merge_opts){path, size, failed, spp_analyze_run}, &merged,
				      &mm, err);
	if (!rc && !(*report = spp_report_merged(merged, &mm, named, nok, err)))
		rc = err->code;
	spp_analysis_destroy(merged);
	for (int r = 0; paths && r < size; r++)
		if (paths[r][0])
			unlink(paths[r]);
	rmdir(dir);
	free(paths);
	free(names);
	free(named);
	free(ok);
	free(failed);
	return rc;
}

int cmd_mpi_analyze(const char *path, struct spp_analyze_opts *o, cJSON **report,
		    struct spp_error *err)
{
	int rank, size, meta[2], failed, *all = NULL, *lens = NULL, *displs = NULL, rc = 0;
	char *text, *buf = NULL;

	*report = NULL;
	MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	o->shard = (struct spp_shard){rank, size, "MPI_COMM_WORLD"};
	if (o->threads <= 0)
		o->threads = 1;
	if (rank)
		o->progress = NULL; /* one progress line: rank 0's */
	text = rank_part(path, o, &failed);
	meta[0] = text ? (int)strlen(text) + 1 : 1;
	meta[1] = failed || !text;
	if (rank == 0) {
		all = malloc((size_t)size * 2 * sizeof(*all));
		lens = malloc((size_t)size * sizeof(*lens));
		displs = malloc((size_t)size * sizeof(*displs));
		if (!all || !lens || !displs)
			MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Gather(meta, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		long long total = 0;

		for (int r = 0; r < size; r++)
			lens[r] = all[2 * r], displs[r] = (int)total, total += all[2 * r];
		if (total > INT32_MAX || !(buf = malloc((size_t)total)))
			MPI_Abort(MPI_COMM_WORLD, 3);
	}
	MPI_Gatherv(text ? text : "", meta[0], MPI_CHAR, buf, lens, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (rank == 0)
		rc = merge_parts(path, buf, all, size, report, err);
	else if (meta[1])
		rc = spp_error_set(err, SPP_E_FORMAT, "rank %d: %s", rank, text ? text : "out of memory");
	free(text);
	free(buf);
	free(all);
	free(lens);
	free(displs);
	return rc;
}

void cmd_mpi_end(void)
{
	MPI_Finalize();
}
#else
int cmd_mpi_launched(void)
{
	return 0;
}

int cmd_mpi_analyze(const char *path, struct spp_analyze_opts *o, cJSON **report,
		    struct spp_error *err)
{
	(void)path, (void)o;
	*report = NULL;
	return spp_error_set(err, SPP_E_UNSUPPORTED, "this spprof is built without MPI (-Dmpi)");
}

void cmd_mpi_end(void)
{
}
#endif
