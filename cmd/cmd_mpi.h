/*
 * MPI mode of analyze (cmd_mpi.c, built with -Dmpi): under mpirun each rank
 * profiles its shard (rank of size), rank 0 gathers the reports and merges
 * them (reports/merge.c); a rank that failed is named in the report and the
 * others' layers are kept.
 */
#ifndef SPP_CMD_MPI_H
#define SPP_CMD_MPI_H

#include <cjson/cJSON.h>

#include "profiler/analyze.h"

/* Whether this process was started by mpirun and spprof was built with MPI. */
int cmd_mpi_launched(void);

/*
 * Initialise MPI, profile path's shard of this rank (o->shard set; one
 * thread unless o->threads says otherwise), gather every rank's report at
 * rank 0 and merge them there. On rank 0 *report is the merged report (the
 * caller writes it, then calls cmd_mpi_end); NULL elsewhere. Returns 0, or
 * the status of this rank's failure (err), or rank 0's merge failure.
 */
int cmd_mpi_analyze(const char *path, struct spp_analyze_opts *o, cJSON **report,
		    struct spp_error *err);

/* MPI_Finalize (once, after the report is written). */
void cmd_mpi_end(void);

#endif
