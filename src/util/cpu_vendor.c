/*
 * cpu_vendor.c
 *	  The CPU's maker and family, from cpuid (see cpu_vendor.h).
 */
#include "util/cpu_vendor.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

unsigned
ox_cpu_amd_family(void)
{
	/* every thread that asks computes the same, so a relaxed store will do */
	static int	detected = -1;
	int			v = __atomic_load_n(&detected, __ATOMIC_RELAXED);

	if (v < 0)
	{
		v = 0;
#if defined(__x86_64__) || defined(__i386__)
		{
			unsigned	a,
						b,
						c,
						d;

			/* "AuthenticAMD" in EBX, EDX, ECX; family = base + extended when base is 0xf */
			if (__get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163 &&
				__get_cpuid(1, &a, &b, &c, &d))
			{
				unsigned	family = (a >> 8) & 0xf;

				if (family == 0xf)
					family += (a >> 20) & 0xff;
				v = (int) family;
			}
		}
#endif
		__atomic_store_n(&detected, v, __ATOMIC_RELAXED);
	}
	return (unsigned) v;
}
