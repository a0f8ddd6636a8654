"""What the benchmark reports say about the machine they ran on, shared by
bench/zoo.py and bench/inquery/run.py."""
import os


def read_text(path):
    with open(path) as f:
        return f.read().strip()


def cache_sizes():
    """One core's data caches, as "L1d 32K, L2 1024K, L3 32768K" (sysfs): hosts that
    name themselves alike ("AMD EPYC") differ here, and the row-wise MLP's rate with them"""
    found = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(d for d in os.listdir(base) if d.startswith("index"))
    except OSError:
        return None
    for d in entries:
        try:
            kind, level, size = (read_text(os.path.join(base, d, name)) for name in ("type", "level", "size"))
        except OSError:
            continue
        if kind in ("Data", "Unified"):
            found["L%s%s" % (level, "d" if kind == "Data" else "")] = size
    return ", ".join("%s %s" % kv for kv in sorted(found.items())) or None


def cpu_model():
    """/proc/cpuinfo's model name, or "unknown" """
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"
