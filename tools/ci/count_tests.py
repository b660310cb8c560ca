#!/usr/bin/env python3
"""Counts GoogleTest test cases in Bazel's test.xml files: prints `passed failed skipped` for a tree.

Usage: count_tests.py TESTLOGS_DIR [--list-failures]
Each test target's test.xml holds <testcase> elements; a case with a <failure> or <error> child failed,
one with result="skipped" (GTEST_SKIP) was skipped. A target with no <testcase> (a non-gtest test or a
crash before any case ran) counts as one case, failed if its XML has a failure/error.
"""
import os
import sys
import xml.etree.ElementTree as ET


def count(root_dir, list_failures=False):
    passed = failed = skipped = 0
    for dirpath, _, files in os.walk(root_dir):
        if "test.xml" not in files:
            continue
        path = os.path.join(dirpath, "test.xml")
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
