#!/usr/bin/env python3
"""Counts GoogleTest test cases in Bazel's test.xml files: prints `passed failed skipped` for a tree.

Usage: count_tests.py TESTLOGS_DIR [--list-failures]
       count_tests.py RESULTS.xml [--list-failures]     (one JUnit-style file, e.g. the interop job's
                                                         $OUT_DIR/interop_results.xml)
Each test target's test.xml holds <testcase> elements; a case with a <failure> or <error> child failed,
one with result="skipped" (GTEST_SKIP) or a <skipped/> child was skipped. A target with no <testcase>
(a non-gtest test or a crash before any case ran) counts as one case, failed if its XML has a
failure/error.
"""
import os
import sys
import xml.etree.ElementTree as ET


def xml_files(root):
    if os.path.isfile(root):
        yield root
        return
    for dirpath, _, files in os.walk(root):
        if "test.xml" in files:
            yield os.path.join(dirpath, "test.xml")


def count(root_dir, list_failures=False):
    passed = failed = skipped = 0
    for path in xml_files(root_dir):
        try:
            tree = ET.parse(path)
        except ET.ParseError:
            failed += 1
            if list_failures:
                print("unparsable:", path, file=sys.stderr)
            continue
        cases = list(tree.iter("testcase"))
        if not cases:
            bad = any(True for _ in tree.iter("failure")) or any(True for _ in tree.iter("error"))
            failed += bad
            passed += not bad
            continue
        for case in cases:
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
                if list_failures:
                    print("FAILED:", case.get("classname"), case.get("name"), file=sys.stderr)
            elif case.get("result") == "skipped" or case.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1
    return passed, failed, skipped


if __name__ == "__main__":
    p, f, s = count(sys.argv[1], "--list-failures" in sys.argv)
    print(p, f, s)
