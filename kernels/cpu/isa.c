/*
 * Run-time choice of the vector code path: what the CPU implements
 * (cpuid) and what the OS saves on a context switch (xgetbv), since a CPU
 * with AVX-512 under an OS that does not save zmm state must not use it.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "kernels/cpu/cpu.h"

#if CPU_X86
#include <cpuid.h>

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}
#endif

const char *spp_isa_name(enum spp_isa isa)
{
	switch (isa) {
	case SPP_ISA_PORTABLE: return "portable";
	case SPP_ISA_AVX2: return "avx2";
	case SPP_ISA_AVX512: return "avx512";
	default: return "unknown";
	}
}

enum spp_isa spp_isa_cpu(void)
{
#if CPU_X86
	unsigned a, b, c, d;
	uint64_t xcr0;
	int avx2, avx512;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return SPP_ISA_PORTABLE;
	/* OSXSAVE, AVX, FMA, POPCNT */
	if (!(c & (1u << 27)) || !(c & (1u << 28)) || !(c & (1u << 12)) || !(c & (1u << 23)))
		return SPP_ISA_PORTABLE;
	xcr0 = xgetbv0();
	if ((xcr0 & 0x6) != 0x6) /* xmm and ymm state */
		return SPP_ISA_PORTABLE;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return SPP_ISA_PORTABLE;
	/* AVX2, BMI1, BMI2 */
	avx2 = (b & (1u << 5)) && (b & (1u << 3)) && (b & (1u << 8));
	/* F, DQ, BW, VL and the opmask, zmm0-15 upper and zmm16-31 state */
	avx512 = avx2 && (b & (1u << 16)) && (b & (1u << 17)) && (b & (1u << 30)) &&
		 (b & (1u << 31)) && (xcr0 & 0xe0) == 0xe0;
	if (avx512)
		return SPP_ISA_AVX512;
	if (avx2)
		return SPP_ISA_AVX2;
#endif
	return SPP_ISA_PORTABLE;
}

enum spp_isa spp_isa_detect(void)
{
	enum spp_isa cpu = spp_isa_cpu();
	const char *cap = getenv("SPPROF_ISA");

	for (int i = 0; cap && *cap && i < SPP_ISA_COUNT; i++)
		if (strcmp(cap, spp_isa_name((enum spp_isa)i)) == 0)
			return (enum spp_isa)i < cpu ? (enum spp_isa)i : cpu;
	return cpu;
}

const char *spp_expand_name(enum spp_expand how)
{
	switch (how) {
	case SPP_EXPAND_VEXPAND: return "vexpand";
	case SPP_EXPAND_PERMUTE: return "permute";
	default: return "unknown";
	}
}

/* AVX512_VPOPCNTDQ (cpuid 7.0 ecx bit 14) beside the AVX-512 kernels' set. */
static int has_vpopcntdq(void)
{
#if CPU_X86
	unsigned a, b, c, d;

	return spp_isa_cpu() >= SPP_ISA_AVX512 && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
	       (c & (1u << 14));
#else
	return 0;
#endif
}

/*
 * What the CPU allows, asked once: the kernel asks on every call, and
 * cpuid traps to the hypervisor in a VM. Bit 0: AVX512_VPOPCNTDQ; bit 1:
 * an AMD CPU with it.
 */
static int expand_facts(void)
{
	static _Atomic int facts = -1;
	int f = atomic_load_explicit(&facts, memory_order_relaxed);

	if (f < 0) {
		f = has_vpopcntdq();
#if CPU_X86
		unsigned a, b, c, d;

		/* vendor "AuthenticAMD": ebx "Auth", edx "enti", ecx "cAMD" */
		if (f && __get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541u && d == 0x69746e65u &&
		    c == 0x444d4163u)
			f |= 2;
#endif
		atomic_store_explicit(&facts, f, memory_order_relaxed);
	}
	return f;
}

enum spp_expand spp_expand_cpu(void)
{
	return expand_facts() & 2 ? SPP_EXPAND_PERMUTE : SPP_EXPAND_VEXPAND;
}

enum spp_expand spp_expand_detect(void)
{
	const char *want = getenv("SPPROF_EXPAND");

	for (int i = 0; want && *want && i < SPP_EXPAND_COUNT; i++)
		if (strcmp(want, spp_expand_name((enum spp_expand)i)) == 0 &&
		    (i != SPP_EXPAND_PERMUTE || (expand_facts() & 1)))
			return (enum spp_expand)i;
	return spp_expand_cpu();
}
