// CUPTI figures of CUDA table entries through the Range Profiler; see cupti.h.
// C++ only because cupti_profiler_host.h includes <string>; no exceptions,
// no STL containers: plain buffers, one cleanup path per function.
#include "kernels/cuda/cupti.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda.h> // types only: libcuda is reached through cudart's entry points
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

extern "C" {
#include "kernels/cuda/measure.h"
}

namespace {

// Nsight Compute's names. Counters are per kernel (one range each); the
// figures of an entry that launches several kernels combine them:
// bytes summed, rates weighted by each kernel's duration.
enum {
	kDramRead,
	kDramWrite,
	kL2Hit,
	kL1Hit,
	kOccupancy,
	kSmActiveMax,
	kSmActiveAvg,
	kBranchUniform,
	kDuration,
	kNumMetrics,
};

const char *const kMetricNames[kNumMetrics] = {
	"dram__bytes_read.sum",
	"dram__bytes_write.sum",
	"lts__t_sector_hit_rate.pct",
	"l1tex__t_sector_hit_rate.pct",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"sm__cycles_active.max",
	"sm__cycles_active.avg",
	"smsp__sass_average_branch_targets_threads_uniform.pct",
	"gpu__time_duration.sum",
};

constexpr size_t kMaxRanges = 64;

} // namespace

struct spp_cupti {
	CUpti_RangeProfiler_Object *rp;
	CUpti_Profiler_Host_Object *host;
	const char *names[kNumMetrics]; // the metrics this chip accepted
	int index[kNumMetrics];         // their place in kMetricNames
	size_t nnames;
	uint8_t *config;
	size_t config_size;
	uint8_t *counter_data;
	size_t counter_data_size;
	char missing[128];              // metrics the chip refused
	int profiler_initialized;
};

namespace {

// A CUPTI parameter struct: zeroed, its size set (the CUPTI convention).
template <class T> T params(size_t size)
{
	T p;

	memset(&p, 0, sizeof(p));
	p.structSize = size;
	return p;
}

void why_of(CUptiResult r, const char *what, char *why, size_t len)
{
	const char *s = nullptr;

	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
		snprintf(why, len, "CUPTI counters not permitted (ERR_NVGPUCTRPERM): need admin or "
			 "NVreg_RestrictProfilingToAdminUsers=0");
		return;
	}
	cuptiGetResultString(r, &s);
	snprintf(why, len, "CUPTI %s: %s", what, s ? s : "unknown error");
}

} // namespace

extern "C" void spp_cupti_close(struct spp_cupti *s)
{
	if (!s)
		return;
	if (s->rp) {
		CUpti_RangeProfiler_Disable_Params p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);

		p.pRangeProfilerObject = s->rp;
		cuptiRangeProfilerDisable(&p);
	}
	if (s->host) {
		CUpti_Profiler_Host_Deinitialize_Params p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);

		p.pHostObject = s->host;
		cuptiProfilerHostDeinitialize(&p);
	}
	if (s->profiler_initialized) {
		CUpti_Profiler_DeInitialize_Params p = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);

		cuptiProfilerDeInitialize(&p);
	}
	free(s->config);
	free(s->counter_data);
	free(s);
}

extern "C" int spp_cupti_open(struct spp_cupti **out, char *why, size_t why_len)
{
	struct spp_cupti *s = static_cast<struct spp_cupti *>(calloc(1, sizeof(struct spp_cupti)));
	CUresult (*ctx_get_current)(CUcontext *) = nullptr;
	cudaDriverEntryPointQueryResult q;
	CUcontext ctx = nullptr;
	uint8_t *avail = nullptr;
	const char *chip = nullptr;
	CUptiResult r;
	int dev = 0;

	*out = nullptr;
	if (!s) {
		snprintf(why, why_len, "CUPTI: out of memory");
		return -1;
	}
	// the context cudart made current; libcuda is never linked, so ask cudart for the entry point
	cudaFree(nullptr);
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", reinterpret_cast<void **>(&ctx_get_current),
					     12000, cudaEnableDefault, &q) != cudaSuccess ||
	    q != cudaDriverEntryPointSuccess || !ctx_get_current || ctx_get_current(&ctx) != CUDA_SUCCESS ||
	    !ctx) {
		cudaGetLastError();
		snprintf(why, why_len, "CUPTI: no current CUDA context to profile");
		goto fail;
	}
	{
		CUpti_Profiler_Initialize_Params p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);

		if ((r = cuptiProfilerInitialize(&p)) != CUPTI_SUCCESS) {
			why_of(r, "profiler initialize", why, why_len);
			goto fail;
		}
		s->profiler_initialized = 1;
	}
	{
		CUpti_Device_GetChipName_Params p = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);

		p.deviceIndex = (size_t)dev;
		if ((r = cuptiDeviceGetChipName(&p)) != CUPTI_SUCCESS) {
			why_of(r, "chip name", why, why_len);
			goto fail;
		}
		chip = p.pChipName;
	}
	{
		CUpti_RangeProfiler_Enable_Params p = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);

		p.ctx = ctx;
		if ((r = cuptiRangeProfilerEnable(&p)) != CUPTI_SUCCESS) {
			why_of(r, "range profiler", why, why_len);
			goto fail;
		}
		s->rp = p.pRangeProfilerObject;
	}
	{
		CUpti_Profiler_GetCounterAvailability_Params p = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);

		p.ctx = ctx;
		if (cuptiProfilerGetCounterAvailability(&p) == CUPTI_SUCCESS && p.counterAvailabilityImageSize) {
			avail = static_cast<uint8_t *>(malloc(p.counterAvailabilityImageSize));
			p.pCounterAvailabilityImage = avail;
			if (avail && cuptiProfilerGetCounterAvailability(&p) != CUPTI_SUCCESS) {
				free(avail);
				avail = nullptr;
			}
		}
	}
	{
		CUpti_Profiler_Host_Initialize_Params p = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);

		p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
		p.pChipName = chip;
		p.pCounterAvailabilityImage = avail;
		if ((r = cuptiProfilerHostInitialize(&p)) != CUPTI_SUCCESS) {
			why_of(r, "host initialize", why, why_len);
			goto fail;
		}
		s->host = p.pHostObject;
	}
	// one metric at a time: a name this chip lacks leaves the others in
	for (int i = 0; i < kNumMetrics; i++) {
		CUpti_Profiler_Host_ConfigAddMetrics_Params p = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
		const char *name = kMetricNames[i];

		p.pHostObject = s->host;
		p.ppMetricNames = &name;
		p.numMetrics = 1;
		if (cuptiProfilerHostConfigAddMetrics(&p) == CUPTI_SUCCESS) {
			s->names[s->nnames] = name;
			s->index[s->nnames++] = i;
		} else {
			size_t used = strlen(s->missing);

			snprintf(s->missing + used, sizeof(s->missing) - used, "%s%s", used ? ", " : "", name);
		}
	}
	if (!s->nnames) {
		snprintf(why, why_len, "CUPTI: this chip (%s) has none of the metrics", chip ? chip : "?");
		goto fail;
	}
	{
		CUpti_Profiler_Host_GetConfigImageSize_Params p = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
		CUpti_Profiler_Host_GetConfigImage_Params q2 = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);

		p.pHostObject = s->host;
		if ((r = cuptiProfilerHostGetConfigImageSize(&p)) != CUPTI_SUCCESS) {
			why_of(r, "config image", why, why_len);
			goto fail;
		}
		s->config_size = p.configImageSize;
		s->config = static_cast<uint8_t *>(malloc(s->config_size ? s->config_size : 1));
		q2.pHostObject = s->host;
		q2.configImageSize = s->config_size;
		q2.pConfigImage = s->config;
		if (!s->config || (r = cuptiProfilerHostGetConfigImage(&q2)) != CUPTI_SUCCESS) {
			why_of(s->config ? r : CUPTI_ERROR_OUT_OF_MEMORY, "config image", why, why_len);
			goto fail;
		}
	}
	{
		CUpti_RangeProfiler_GetCounterDataSize_Params p = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);

		p.pRangeProfilerObject = s->rp;
		p.pMetricNames = s->names;
		p.numMetrics = s->nnames;
		p.maxNumOfRanges = kMaxRanges;
		p.maxNumRangeTreeNodes = kMaxRanges;
		if ((r = cuptiRangeProfilerGetCounterDataSize(&p)) != CUPTI_SUCCESS) {
			why_of(r, "counter data size", why, why_len);
			goto fail;
		}
		s->counter_data_size = p.counterDataSize;
		s->counter_data = static_cast<uint8_t *>(malloc(s->counter_data_size ? s->counter_data_size : 1));
		if (!s->counter_data) {
			snprintf(why, why_len, "CUPTI: out of memory");
			goto fail;
		}
	}
	free(avail);
	*out = s;
	return 0;
fail:
	free(avail);
	spp_cupti_close(s);
	return -1;
}

namespace {

void figures_unknown(struct spp_cupti_figures *g)
{
	g->ok = 0;
	g->dram_read_bytes = g->dram_write_bytes = NAN;
	g->l2_hit_rate = g->l1_hit_rate = g->achieved_occupancy = NAN;
	g->sm_active_imbalance = g->branch_efficiency = NAN;
	g->note[0] = '\0';
}

// Duration-weighted mean of a per-kernel figure, skipping kernels without it.
struct mean {
	double sum = 0, weight = 0;
	void add(double v, double w)
	{
		if (std::isfinite(v) && w > 0) {
			sum += v * w;
			weight += w;
		}
	}
	double get() const { return weight > 0 ? sum / weight : NAN; }
};

} // namespace

extern "C" void spp_cupti_measure(struct spp_cupti *s, struct spp_cuda_case *c,
				  struct spp_cupti_figures *g)
{
	double v[kNumMetrics], full[kNumMetrics];
	double read = 0, write = 0;
	int have_read = 0, have_write = 0;
	mean l2, l1, occ, imb, br;
	struct spp_error e2 = {0, {0}};
	size_t ranges = 0, dropped = 0;
	CUptiResult r;

	figures_unknown(g);
	{
		CUpti_RangeProfiler_CounterDataImage_Initialize_Params p = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);

		p.pRangeProfilerObject = s->rp;
		p.counterDataSize = s->counter_data_size;
		p.pCounterData = s->counter_data;
		if ((r = cuptiRangeProfilerCounterDataImageInitialize(&p)) != CUPTI_SUCCESS) {
			why_of(r, "counter data", g->note, sizeof(g->note));
			return;
		}
	}
	{
		CUpti_RangeProfiler_SetConfig_Params p = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);

		p.pRangeProfilerObject = s->rp;
		p.configSize = s->config_size;
		p.pConfig = s->config;
		p.counterDataImageSize = s->counter_data_size;
		p.pCounterDataImage = s->counter_data;
		// one range per kernel, each replayed by CUPTI for as many passes as the metrics need
		p.range = CUPTI_AutoRange;
		p.replayMode = CUPTI_KernelReplay;
		p.maxRangesPerPass = kMaxRanges;
		p.numNestingLevels = 1;
		p.minNestingLevel = 1;
		p.passIndex = 0;
		p.targetNestingLevel = 0;
		if ((r = cuptiRangeProfilerSetConfig(&p)) != CUPTI_SUCCESS) {
			why_of(r, "set config", g->note, sizeof(g->note));
			return;
		}
	}
	{
		CUpti_RangeProfiler_Start_Params p = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
		CUpti_RangeProfiler_Stop_Params q = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
		int launched;

		p.pRangeProfilerObject = s->rp;
		if ((r = cuptiRangeProfilerStart(&p)) != CUPTI_SUCCESS) {
			why_of(r, "start", g->note, sizeof(g->note));
			return;
		}
		launched = spp_cuda_case_run(c, &e2) == 0 && cudaDeviceSynchronize() == cudaSuccess;
		q.pRangeProfilerObject = s->rp;
		r = cuptiRangeProfilerStop(&q);
		if (!launched) {
			cudaGetLastError();
			snprintf(g->note, sizeof(g->note), "CUPTI: the profiled launch failed: %.120s", e2.msg);
			return;
		}
		if (r != CUPTI_SUCCESS) {
			why_of(r, "stop", g->note, sizeof(g->note));
			return;
		}
	}
	{
		CUpti_RangeProfiler_DecodeData_Params p = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
		CUpti_RangeProfiler_GetCounterDataInfo_Params q = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);

		p.pRangeProfilerObject = s->rp;
		if ((r = cuptiRangeProfilerDecodeData(&p)) != CUPTI_SUCCESS) {
			why_of(r, "decode", g->note, sizeof(g->note));
			return;
		}
		dropped = p.numOfRangeDropped;
		q.pCounterDataImage = s->counter_data;
		q.counterDataImageSize = s->counter_data_size;
		if ((r = cuptiRangeProfilerGetCounterDataInfo(&q)) != CUPTI_SUCCESS) {
			why_of(r, "counter data info", g->note, sizeof(g->note));
			return;
		}
		ranges = q.numTotalRanges;
	}
	if (ranges == 0) {
		snprintf(g->note, sizeof(g->note), "CUPTI: no kernel range recorded");
		return;
	}
	for (size_t i = 0; i < ranges; i++) {
		CUpti_Profiler_Host_EvaluateToGpuValues_Params p = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
		double w;

		p.pHostObject = s->host;
		p.pCounterDataImage = s->counter_data;
		p.counterDataImageSize = s->counter_data_size;
		p.rangeIndex = i;
		p.ppMetricNames = s->names;
		p.numMetrics = s->nnames;
		p.pMetricValues = v;
		if ((r = cuptiProfilerHostEvaluateToGpuValues(&p)) != CUPTI_SUCCESS) {
			why_of(r, "evaluate", g->note, sizeof(g->note));
			return;
		}
		for (int m = 0; m < kNumMetrics; m++)
			full[m] = NAN;
		for (size_t m = 0; m < s->nnames; m++)
			full[s->index[m]] = v[m];
		w = std::isfinite(full[kDuration]) && full[kDuration] > 0 ? full[kDuration] : 1.0;
		if (std::isfinite(full[kDramRead])) {
			read += full[kDramRead];
			have_read = 1;
		}
		if (std::isfinite(full[kDramWrite])) {
			write += full[kDramWrite];
			have_write = 1;
		}
		l2.add(full[kL2Hit] / 100.0, w);
		l1.add(full[kL1Hit] / 100.0, w);
		occ.add(full[kOccupancy] / 100.0, w);
		if (full[kSmActiveAvg] > 0)
			imb.add(full[kSmActiveMax] / full[kSmActiveAvg], w);
		br.add(full[kBranchUniform] / 100.0, w);
	}
	g->dram_read_bytes = have_read ? read : NAN;
	g->dram_write_bytes = have_write ? write : NAN;
	g->l2_hit_rate = l2.get();
	g->l1_hit_rate = l1.get();
	g->achieved_occupancy = occ.get();
	g->sm_active_imbalance = imb.get();
	g->branch_efficiency = br.get();
	g->ok = 1;
	if (s->missing[0])
		snprintf(g->note, sizeof(g->note), "not on this chip: %s", s->missing);
	else if (dropped)
		snprintf(g->note, sizeof(g->note), "%zu of the entry's kernels dropped by CUPTI", dropped);
	else if (ranges > 1)
		snprintf(g->note, sizeof(g->note), "%zu kernels: bytes summed, rates weighted by duration", ranges);
}

extern "C" void spp_cupti_describe(int have_device, char *buf, size_t len)
{
	uint32_t version = 0;
	struct spp_cupti *s = nullptr;
	char why[160];

	cuptiGetVersion(&version);
	if (!have_device) {
		snprintf(buf, len, "CUPTI API %u, range profiler: no device to count on", version);
		return;
	}
	if (spp_cupti_open(&s, why, sizeof(why))) {
		snprintf(buf, len, "CUPTI API %u, range profiler: %s", version, why);
		return;
	}
	snprintf(buf, len, "CUPTI API %u, range profiler: counters available%s%s", version,
		 s->missing[0] ? "; not on this chip: " : "", s->missing);
	spp_cupti_close(s);
}
