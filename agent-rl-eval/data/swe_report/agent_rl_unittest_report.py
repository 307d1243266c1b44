"""`python -m unittest` for the agent-rl grader: runs the tests as `unittest` does and writes
each test's outcome, one `name (module.Class) ... word` line as `unittest -v` words it, to the
report file named by AGENT_RL_TEST_REPORT, and a last `#finished <exit status>` line."""

import os
import sys
import unittest

_PATH = os.environ.pop("AGENT_RL_TEST_REPORT", None)
_OUT = open(_PATH, "w", encoding="utf-8") if _PATH else None


def _write(line):
    if _OUT is not None:
        _OUT.write(line.replace("\n", " ") + "\n")
        _OUT.flush()


class _Result(unittest.TextTestResult):
    def addSuccess(self, test):
        super().addSuccess(test)
        _write("%s ... ok" % test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        _write("%s ... FAIL" % test)

    def addError(self, test, err):
        super().addError(test, err)
        _write("%s ... ERROR" % test)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        _write("%s ... skipped" % test)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        _write("%s ... expected failure" % test)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        _write("%s ... unexpected success" % test)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failed = issubclass(err[0], test.failureException)
            _write("%s ... %s" % (test, "FAIL" if failed else "ERROR"))


class _Runner(unittest.TextTestRunner):
    resultclass = _Result


if __name__ == "__main__":
    sys.argv[0] = "python -m unittest"
    program = unittest.main(module=None, testRunner=_Runner, exit=False)
    status = 0 if program.result.wasSuccessful() else 1
    _write("#finished %d" % status)
    if _OUT is not None:
        _OUT.close()
    sys.exit(status)
