/*
 * hide_avx512.c
 *	  An LD_PRELOAD library that makes this process's CPU report no AVX-512
 *	  (nor AVX-VNNI or AMX), so that onnx_pg and onnxruntime both pick their
 *	  AVX2 kernels on a machine that has AVX-512: the AVX2 paths side by side
 *	  in one process, on a machine where no AVX2-only CPU is at hand.
 *
 *	gcc -O2 -shared -fPIC -o bench/results/hide_avx512.so bench/hide_avx512.c
 *	LD_PRELOAD=$PWD/bench/results/hide_avx512.so python3 bench/layers.py --set resnet50
 *
 * How: Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID, where the CPU has
 * it: "cpuid_fault" in /proc/cpuinfo's flags) makes every CPUID instruction
 * of the process raise SIGSEGV; the handler runs the real CPUID with
 * faulting briefly off, clears the feature bits below and steps over the
 * instruction.  The setting is per thread and inherited by the threads made
 * after it (the constructor runs before the program's own).  Both engines
 * read their features through CPUID (onnx_pg's cpuid checks, onnxruntime's
 * MLAS and cpuinfo), so both see the same CPU; glibc chose its string
 * functions before this library loaded.  /proc/cpuinfo still lists
 * avx512f: bench/run.py's peak FLOP/s would be AVX-512's, so its report is
 * not for such a run; bench/layers.py and bench/nodes.py are.
 *
 * Timings are the AVX2 kernels on this core's caches and ports, not those of
 * an AVX2-only CPU (a Zen 2's 512 KB L2 and 32 KB L1 differ).
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static long
cpuid_faulting(int allow)
{
	return syscall(SYS_arch_prctl, ARCH_SET_CPUID, allow);
}

/* CPUID leaf 7's feature bits withheld: AVX-512 (all), AVX-VNNI, AMX */
#define L7_EBX_HIDE ((1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) | \
					 (1u << 30) | (1u << 31))
#define L7_ECX_HIDE ((1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) | (1u << 14))
#define L7_EDX_HIDE ((1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) | (1u << 25))
#define L7_1_EAX_HIDE ((1u << 4) | (1u << 5))

static void
on_sigsegv(int sig, siginfo_t *info, void *context)
{
	ucontext_t *uc = context;
	greg_t	   *r = uc->uc_mcontext.gregs;
	const unsigned char *ip = (const unsigned char *) r[REG_RIP];
	unsigned	a,
				b,
				c,
				d,
				leaf = (unsigned) r[REG_RAX],
				sub = (unsigned) r[REG_RCX];

	(void) info;
	if (ip[0] != 0x0f || ip[1] != 0xa2)
	{
		/* a real fault: let it happen again with the default action */
		signal(sig, SIG_DFL);
		return;
	}
	cpuid_faulting(1);
	__cpuid_count(leaf, sub, a, b, c, d);
	cpuid_faulting(0);
	if (leaf == 7 && sub == 0)
	{
		b &= ~L7_EBX_HIDE;
		c &= ~L7_ECX_HIDE;
		d &= ~L7_EDX_HIDE;
	}
	else if (leaf == 7 && sub == 1)
		a &= ~L7_1_EAX_HIDE;
	r[REG_RAX] = a;
	r[REG_RBX] = b;
	r[REG_RCX] = c;
	r[REG_RDX] = d;
	r[REG_RIP] += 2;			/* CPUID is 0F A2 */
}

__attribute__((constructor)) static void
hide_avx512(void)
{
	static const char fail[] = "hide_avx512: no CPUID faulting on this machine; AVX-512 stays visible\n";
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsegv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	if (cpuid_faulting(0) != 0)
	{
		ssize_t		written = write(2, fail, sizeof(fail) - 1);

		(void) written;
	}
}
