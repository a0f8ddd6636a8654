/*
 * cpu_vendor.h
 *	  Which maker's x86 core the engine runs on, for the few kernel choices
 *	  that measured one way on AMD's cores and the other on Intel's.
 */
#ifndef OX_CPU_VENDOR_H
#define OX_CPU_VENDOR_H

/*
 * The family of an AMD processor (0x19: Zen 3 and Zen 4; 0x1a: Zen 5), or
 * 0 on any other maker's.  Computed once; any thread may ask.
 */
unsigned	ox_cpu_amd_family(void);

#endif							/* OX_CPU_VENDOR_H */
