/*
 * PyTorch as a reference peer: torch.sparse.mm on a CSR tensor and dense
 * torch.mm, run in a Python interpreter by scripts/peers/torch_spmm.py, so
 * that a report can show what a user of pruned models would compare
 * against. Nothing of Python is linked: one call writes W and X as .npy
 * into a private temporary folder (mkdtemp under $TMPDIR, else /tmp), runs
 * the script with posix_spawn (no shell), reads its result.json and the two
 * Y it wrote, checks each Y against spp_reference_gemm, and removes the
 * folder in every case.
 *
 * The interpreter: $SPPROF_PYTHON when set and not empty, else
 * /usr/bin/python3 when it exists (Debian's python3-torch lives there),
 * else python3 on PATH. The script: scripts/peers/torch_spmm.py of the
 * repository this binary was built from (the executable's folder and up to
 * three above it, then the current folder, then the source root the build
 * was configured from), or share/spprof/peers/torch_spmm.py of an
 * installed prefix.
 *
 * What a run leaves (struct spp_peer_torch) is profiler/peer_torch_result.h.
 *
 * The caller owns every struct; nothing here keeps a pointer to its
 * arguments past the call.
 */
#ifndef SPP_PROFILER_PEER_TORCH_H
#define SPP_PROFILER_PEER_TORCH_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "base/error.h"
#include "profiler/peer_torch_result.h"

/*
 * Time the two torch ops on Y = W X (w: M x K, x: K x n row-major, both
 * fp32, n >= 1) with `threads` torch threads (interop threads 1) for about
 * budget_s seconds of timed rounds (at least 5 rounds), and fill *out.
 * Returns 0 (also when a Y fails its check: that op has verified = 0);
 * SPP_E_USAGE for bad arguments; SPP_E_UNSUPPORTED with the reason when
 * torch cannot be imported (the script's one line), no interpreter can be
 * run or the script is not found; SPP_E_OUTPUT when the inputs cannot be
 * written; SPP_E_NOMEM; SPP_E_RUNTIME with what went wrong for any other
 * failure (the script's exit status and last line of output, a killed or
 * timed-out run, a missing or malformed result.json or Y). *out is zeroed
 * first, so it is defined on failure too.
 */
int spp_peer_torch_run(const struct spp_matrix *w, const float *x, int64_t n, int threads,
		       double budget_s, struct spp_peer_torch *out, struct spp_error *err);

/* The interpreter spp_peer_torch_run would use (above), into out[0, size). */
void spp_peer_torch_python(char *out, size_t size);

/*
 * Locate the script (above) into out[0, size). Returns 0, or
 * SPP_E_UNSUPPORTED saying where it looked.
 */
int spp_peer_torch_script(char *out, size_t size, struct spp_error *err);

#endif
