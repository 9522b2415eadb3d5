// The GPU counters backend through CUPTI's Range Profiler; see cupti.h.
// C++ only because cupti_profiler_host.h includes <string>; no exceptions,
// no STL containers: plain buffers, one cleanup path per function.
// error.h declares no extern "C" of its own; included here first, its guard
// keeps cupti.h's include of it from declaring C++ names
extern "C" {
#include "base/error.h"
}
#include "counters/cupti.h"

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

// err from a CUPTI failure of `what`: code, or SPP_E_UNSUPPORTED when
// counting is not permitted, SPP_E_NOMEM when CUPTI ran out of memory.
int cupti_error(struct spp_error *err, int code, CUptiResult r, const char *what)
{
	const char *s = nullptr;

	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
		return spp_error_set(err, SPP_E_UNSUPPORTED,
				     "CUPTI counters not permitted (ERR_NVGPUCTRPERM): need admin or "
				     "NVreg_RestrictProfilingToAdminUsers=0");
	cuptiGetResultString(r, &s);
	return spp_error_set(err, r == CUPTI_ERROR_OUT_OF_MEMORY ? SPP_E_NOMEM : code,
			     "CUPTI %s: %s", what, s ? s : "unknown error");
}

// The context cudart made current, and its device; libcuda is never
// linked, so cudart is asked for the driver's entry point.
int current_context(CUcontext *ctx, int *dev, struct spp_error *err)
{
	CUresult (*ctx_get_current)(CUcontext *) = nullptr;
	cudaDriverEntryPointQueryResult q;

	*ctx = nullptr;
	cudaFree(nullptr);
	if (cudaGetDevice(dev) != cudaSuccess ||
	    cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", reinterpret_cast<void **>(&ctx_get_current),
					     12000, cudaEnableDefault, &q) != cudaSuccess ||
	    q != cudaDriverEntryPointSuccess || !ctx_get_current || ctx_get_current(ctx) != CUDA_SUCCESS ||
	    !*ctx) {
		cudaGetLastError();
		return spp_error_set(err, SPP_E_UNSUPPORTED, "CUPTI: no current CUDA context to profile");
	}
	return 0;
}

// The profiler initialised, the chip's name, the range profiler enabled on ctx.
int enable_profiler(struct spp_cupti *s, CUcontext ctx, int dev, const char **chip,
		    struct spp_error *err)
{
	CUptiResult r;

	{
		CUpti_Profiler_Initialize_Params p = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);

		if ((r = cuptiProfilerInitialize(&p)) != CUPTI_SUCCESS)
			return cupti_error(err, SPP_E_UNSUPPORTED, r, "profiler initialize");
		s->profiler_initialized = 1;
	}
	{
		CUpti_Device_GetChipName_Params p = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);

		p.deviceIndex = (size_t)dev;
		if ((r = cuptiDeviceGetChipName(&p)) != CUPTI_SUCCESS)
			return cupti_error(err, SPP_E_UNSUPPORTED, r, "chip name");
		*chip = p.pChipName;
	}
	{
		CUpti_RangeProfiler_Enable_Params p = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);

		p.ctx = ctx;
		if ((r = cuptiRangeProfilerEnable(&p)) != CUPTI_SUCCESS)
			return cupti_error(err, SPP_E_UNSUPPORTED, r, "range profiler");
		s->rp = p.pRangeProfilerObject;
	}
	return 0;
}

// ctx's counter availability image (malloc'd), or NULL when CUPTI has none.
uint8_t *counter_availability(CUcontext ctx)
{
	CUpti_Profiler_GetCounterAvailability_Params p = params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
	uint8_t *avail = nullptr;

	p.ctx = ctx;
	if (cuptiProfilerGetCounterAvailability(&p) == CUPTI_SUCCESS && p.counterAvailabilityImageSize) {
		avail = static_cast<uint8_t *>(malloc(p.counterAvailabilityImageSize));
		p.pCounterAvailabilityImage = avail;
		if (avail && cuptiProfilerGetCounterAvailability(&p) != CUPTI_SUCCESS) {
			free(avail);
			avail = nullptr;
		}
	}
	return avail;
}

// The host object for chip, and the metrics it accepts, one at a time: a
// name this chip lacks leaves the others in (and goes into s->missing).
int add_metrics(struct spp_cupti *s, const char *chip, const uint8_t *avail, struct spp_error *err)
{
	CUpti_Profiler_Host_Initialize_Params h = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
	CUptiResult r;

	h.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	h.pChipName = chip;
	h.pCounterAvailabilityImage = avail;
	if ((r = cuptiProfilerHostInitialize(&h)) != CUPTI_SUCCESS)
		return cupti_error(err, SPP_E_UNSUPPORTED, r, "host initialize");
	s->host = h.pHostObject;
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
	if (!s->nnames)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "CUPTI: this chip (%s) has none of the metrics",
				     chip ? chip : "?");
	return 0;
}

// The config image of the accepted metrics and the counter data buffer.
int make_images(struct spp_cupti *s, struct spp_error *err)
{
	CUptiResult r;

	{
		CUpti_Profiler_Host_GetConfigImageSize_Params p = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
		CUpti_Profiler_Host_GetConfigImage_Params q = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);

		p.pHostObject = s->host;
		if ((r = cuptiProfilerHostGetConfigImageSize(&p)) != CUPTI_SUCCESS)
			return cupti_error(err, SPP_E_UNSUPPORTED, r, "config image");
		s->config_size = p.configImageSize;
		s->config = static_cast<uint8_t *>(malloc(s->config_size ? s->config_size : 1));
		q.pHostObject = s->host;
		q.configImageSize = s->config_size;
		q.pConfigImage = s->config;
		if (!s->config || (r = cuptiProfilerHostGetConfigImage(&q)) != CUPTI_SUCCESS)
			return cupti_error(err, SPP_E_UNSUPPORTED, s->config ? r : CUPTI_ERROR_OUT_OF_MEMORY,
					   "config image");
	}
	{
		CUpti_RangeProfiler_GetCounterDataSize_Params p = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);

		p.pRangeProfilerObject = s->rp;
		p.pMetricNames = s->names;
		p.numMetrics = s->nnames;
		p.maxNumOfRanges = kMaxRanges;
		p.maxNumRangeTreeNodes = kMaxRanges;
		if ((r = cuptiRangeProfilerGetCounterDataSize(&p)) != CUPTI_SUCCESS)
			return cupti_error(err, SPP_E_UNSUPPORTED, r, "counter data size");
		s->counter_data_size = p.counterDataSize;
		s->counter_data = static_cast<uint8_t *>(malloc(s->counter_data_size ? s->counter_data_size : 1));
		if (!s->counter_data)
			return spp_error_set(err, SPP_E_NOMEM, "CUPTI: out of memory");
	}
	return 0;
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

extern "C" int spp_cupti_open(struct spp_cupti **out, struct spp_error *err)
{
	struct spp_cupti *s = static_cast<struct spp_cupti *>(calloc(1, sizeof(struct spp_cupti)));
	CUcontext ctx = nullptr;
	uint8_t *avail = nullptr;
	const char *chip = nullptr;
	int dev = 0, rc;

	*out = nullptr;
	if (!s)
		return spp_error_set(err, SPP_E_NOMEM, "CUPTI: out of memory");
	if ((rc = current_context(&ctx, &dev, err)) || (rc = enable_profiler(s, ctx, dev, &chip, err)))
		goto fail;
	avail = counter_availability(ctx);
	if ((rc = add_metrics(s, chip, avail, err)) || (rc = make_images(s, err)))
		goto fail;
	free(avail);
	*out = s;
	return 0;
fail:
	free(avail);
	spp_cupti_close(s);
	return rc;
}

namespace {

void figures_unknown(struct spp_cupti_figures *g)
{
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

// The counter data image emptied and the session's config set: one range
// per kernel, each replayed by CUPTI for as many passes as the metrics need.
int arm(struct spp_cupti *s, struct spp_error *err)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params c = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
	CUpti_RangeProfiler_SetConfig_Params p = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
	CUptiResult r;

	c.pRangeProfilerObject = s->rp;
	c.counterDataSize = s->counter_data_size;
	c.pCounterData = s->counter_data;
	if ((r = cuptiRangeProfilerCounterDataImageInitialize(&c)) != CUPTI_SUCCESS)
		return cupti_error(err, SPP_E_RUNTIME, r, "counter data");
	p.pRangeProfilerObject = s->rp;
	p.configSize = s->config_size;
	p.pConfig = s->config;
	p.counterDataImageSize = s->counter_data_size;
	p.pCounterDataImage = s->counter_data;
	p.range = CUPTI_AutoRange;
	p.replayMode = CUPTI_KernelReplay;
	p.maxRangesPerPass = kMaxRanges;
	p.numNestingLevels = 1;
	p.minNestingLevel = 1;
	p.passIndex = 0;
	p.targetNestingLevel = 0;
	if ((r = cuptiRangeProfilerSetConfig(&p)) != CUPTI_SUCCESS)
		return cupti_error(err, SPP_E_RUNTIME, r, "set config");
	return 0;
}

// The one profiled launch between start and stop; the device is waited
// for before the stop, so that every kernel of the launch is in a range.
int profiled_launch(struct spp_cupti *s, int (*launch)(void *ctx, struct spp_error *err), void *ctx,
		    struct spp_error *err)
{
	CUpti_RangeProfiler_Start_Params p = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
	CUpti_RangeProfiler_Stop_Params q = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
	struct spp_error e2 = {0, {0}};
	CUptiResult r;
	int launched;

	p.pRangeProfilerObject = s->rp;
	if ((r = cuptiRangeProfilerStart(&p)) != CUPTI_SUCCESS)
		return cupti_error(err, SPP_E_RUNTIME, r, "start");
	launched = launch(ctx, &e2) == 0 && cudaDeviceSynchronize() == cudaSuccess;
	q.pRangeProfilerObject = s->rp;
	r = cuptiRangeProfilerStop(&q);
	if (!launched) {
		cudaGetLastError();
		return spp_error_set(err, SPP_E_DEVICE, "CUPTI: the profiled launch failed: %.120s", e2.msg);
	}
	if (r != CUPTI_SUCCESS)
		return cupti_error(err, SPP_E_RUNTIME, r, "stop");
	return 0;
}

// The recorded ranges decoded: how many there are and how many CUPTI dropped.
int decode(struct spp_cupti *s, size_t *ranges, size_t *dropped, struct spp_error *err)
{
	CUpti_RangeProfiler_DecodeData_Params p = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
	CUpti_RangeProfiler_GetCounterDataInfo_Params q = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
	CUptiResult r;

	p.pRangeProfilerObject = s->rp;
	if ((r = cuptiRangeProfilerDecodeData(&p)) != CUPTI_SUCCESS)
		return cupti_error(err, SPP_E_RUNTIME, r, "decode");
	*dropped = p.numOfRangeDropped;
	q.pCounterDataImage = s->counter_data;
	q.counterDataImageSize = s->counter_data_size;
	if ((r = cuptiRangeProfilerGetCounterDataInfo(&q)) != CUPTI_SUCCESS)
		return cupti_error(err, SPP_E_RUNTIME, r, "counter data info");
	*ranges = q.numTotalRanges;
	if (*ranges == 0)
		return spp_error_set(err, SPP_E_RUNTIME, "CUPTI: no kernel range recorded");
	return 0;
}

// Each range evaluated and the kernels combined into g: bytes summed,
// rates weighted by duration (1 where a kernel's duration is unknown).
int evaluate(struct spp_cupti *s, size_t ranges, struct spp_cupti_figures *g, struct spp_error *err)
{
	double v[kNumMetrics], full[kNumMetrics];
	double read = 0, write = 0;
	int have_read = 0, have_write = 0;
	mean l2, l1, occ, imb, br;
	CUptiResult r;

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
		if ((r = cuptiProfilerHostEvaluateToGpuValues(&p)) != CUPTI_SUCCESS)
			return cupti_error(err, SPP_E_RUNTIME, r, "evaluate");
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
	return 0;
}

} // namespace

extern "C" int spp_cupti_measure(struct spp_cupti *s, int (*launch)(void *ctx, struct spp_error *err),
				 void *ctx, struct spp_cupti_figures *g, struct spp_error *err)
{
	size_t ranges = 0, dropped = 0;
	int rc;

	figures_unknown(g);
	// evaluate sets the figures only once every range is in
	if ((rc = arm(s, err)) || (rc = profiled_launch(s, launch, ctx, err)) ||
	    (rc = decode(s, &ranges, &dropped, err)) || (rc = evaluate(s, ranges, g, err)))
		return rc;
	if (s->missing[0])
		snprintf(g->note, sizeof(g->note), "not on this chip: %s", s->missing);
	else if (dropped)
		snprintf(g->note, sizeof(g->note), "%zu of the entry's kernels dropped by CUPTI", dropped);
	else if (ranges > 1)
		snprintf(g->note, sizeof(g->note), "%zu kernels: bytes summed, rates weighted by duration", ranges);
	return 0;
}

extern "C" int spp_cupti_probe(int have_device, char *line, size_t len)
{
	uint32_t version = 0;
	struct spp_cupti *s = nullptr;
	struct spp_error err = {0, {0}};

	cuptiGetVersion(&version);
	if (!have_device) {
		snprintf(line, len, "CUPTI API %u, range profiler: no device to count on", version);
		return 0;
	}
	// the reason as the 160-byte line it always was
	if (spp_cupti_open(&s, &err)) {
		snprintf(line, len, "CUPTI API %u, range profiler: %.159s", version, err.msg);
		return 0;
	}
	snprintf(line, len, "CUPTI API %u, range profiler: counters available%s%s", version,
		 s->missing[0] ? "; not on this chip: " : "", s->missing);
	spp_cupti_close(s);
	return 1;
}
