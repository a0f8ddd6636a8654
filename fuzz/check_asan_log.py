#!/usr/bin/env python3
"""Check the log of a sanitized run of the conformance runner
(make -C fuzz conformance-asan): fail on any AddressSanitizer or
UndefinedBehaviorSanitizer report, and on any leak allocated by the engine
(a frame under src/).  Leaks of the runner's own bookkeeping at exit (its
list of tests) are not the engine's and are ignored.

    python3 fuzz/check_asan_log.py LOG
"""
import re
import sys


def main(path):
    text = open(path, errors="replace").read()
    bad = []
    for m in re.finditer(r"^.*(ERROR: AddressSanitizer|runtime error:).*$", text, re.M):
        bad.append(text[max(0, m.start() - 200): m.end() + 3000])
    # leak blocks: "Direct leak of ..." up to the next blank line
    for m in re.finditer(r"^(Direct|Indirect) leak of .*?(?:\n\n|\Z)", text, re.M | re.S):
        if re.search(r" in \S+ \S*/src/(util|model|kernels|runtime)/", m.group(0)):
            bad.append(m.group(0))
    for b in bad[:5]:
        print(b.rstrip())
        print("----")
    if bad:
        print("%d sanitizer report(s) in %s" % (len(bad), path))
        return 1
    n = len(re.findall(r"^(PASS|FAIL|SKIP)\b", text, re.M))
    print("sanitizers: no report in %d conformance tests (%s)" % (n, path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
