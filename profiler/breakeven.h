/*
 * Breakeven of a model's layers, recommendation per layer and the
 * model-wide projection (DESIGN sections 5 and 6).
 *
 * analyze --breakeven sweeps once per distinct (M, K, N, pattern): the
 * formats of one sweep share its dense baseline, and a transformer's
 * repeated blocks share one sweep. The sweeps belong to the analysis
 * (a->sweeps, layer i's is a->sweeps[a->sweep_of[i]], -1 none).
 *
 * The recommendation is a pure function of the measured runs, computed
 * once with the other derived figures (profiler/derive.h).
 */
#ifndef SPP_PROFILER_BREAKEVEN_H
#define SPP_PROFILER_BREAKEVEN_H

#include "profiler/run.h"
#include "profiler/static.h"
#include "profiler/sweep.h"

struct spp_analysis;

/*
 * The sweep pattern of a layer from its static class: unstructured and
 * dense layers sweep unstructured W, nm the sparsest N:M it complies with,
 * block 4x4 blocks, channel zero rows. Fills o's pattern fields.
 */
void spp_breakeven_pattern(const struct spp_layer_static *s, struct spp_sweep_opts *o);

/*
 * Sweep every analysed layer of a (ro: the run options of its kernel
 * runs; fmts: the formats it ran, peers excluded), once per distinct
 * (M, K, N, pattern). The time budget of a layer's runs is spread over
 * the points of its sweep. Fills a->sweeps, a->nsweeps, a->sweep_of.
 * Returns 0, SPP_E_NOMEM or a timing failure.
 */
int spp_breakeven_analysis(struct spp_analysis *a, const struct spp_run_opts *ro,
			   const struct spp_format_ops *const *fmts, int nf,
			   struct spp_error *err);

/*
 * With a->opts.n_sweep_count: each layer's speedup against N on its own
 * decoded W (spp_nsweep_run over the nf CPU formats fmts, the sparsity
 * the layer's), into a->nsweeps_n; the layer's time budget spread over
 * its points. Layers without runs get none. 0, SPP_E_NOMEM or a timing
 * error.
 */
int spp_nsweep_analysis(struct spp_analysis *a, const struct spp_run_opts *ro,
			const struct spp_format_ops *const *fmts, int nf, struct spp_error *err);

#endif
